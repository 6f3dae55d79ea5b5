import { Worker } from 'node:worker_threads';

/**
 * Starts a worker from CommonJS source (so it needs no file of its own next to compiled or
 * tsx-run sources) and waits for its first message: `{ kind: 'ready' }`, or
 * `{ kind: 'load-failed', message }`, which terminates it and rejects naming `what`.
 */
export async function startEvalWorker(what: string, source: string, workerData: unknown): Promise<{ worker: Worker; ready: Record<string, unknown> }> {
  const worker = new Worker(source, { eval: true, workerData });
  const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const onMessage = (message: { kind: string; message?: string }) => {
      worker.off('error', onError);
      if (message.kind === 'ready') resolve(message);
      else reject(new Error(`${what} failed to load: ${message.kind === 'load-failed' ? message.message : message.kind}`));
    };
    const onError = (error: Error) => {
      worker.off('message', onMessage);
      reject(error);
    };
    worker.once('message', onMessage);
    worker.once('error', onError);
  }).catch(async (error: unknown) => {
    await worker.terminate();
    throw error;
  });
  return { worker, ready };
}
