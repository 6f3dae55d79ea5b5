import { parentPort, Worker, workerData, type MessagePort } from 'node:worker_threads';

/**
 * Starts a worker thread whose code is a module of its own (`<name>.ts` beside the caller, type
 * checked and linted with the rest; `<name>.js` in the built service), and waits for its first
 * message: `{ kind: 'ready' }`, or `{ kind: 'load-failed', message }`, which terminates it and
 * rejects naming `what`. Under tsx the module is TypeScript, which a Node 20 worker cannot load
 * by itself (the parent's --import hooks do not reach a worker's entry), so a three-line
 * bootstrap registers tsx in the worker first; the built service loads the .js directly.
 */
export async function startThread(what: string, callerUrl: string, name: string, data: unknown): Promise<{ worker: Worker; ready: Record<string, unknown> }> {
  const fromSources = callerUrl.endsWith('.ts');
  const entry = new URL(`./${name}${fromSources ? '.ts' : '.js'}`, callerUrl);
  const worker = fromSources
    ? new Worker(BOOTSTRAP, { eval: true, workerData: { entry: entry.href, tsx: import.meta.resolve('tsx/esm/api'), data } })
    : new Worker(entry, { workerData: { data } });
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

/** In a thread started by startThread: the port to its starter. */
export function threadPort(): MessagePort {
  if (!parentPort) throw new Error('this module runs as a worker thread (startThread)');
  return parentPort;
}

/** In a thread started by startThread: the data its starter gave. */
export function threadData<T>(): T {
  return (workerData as { data: T }).data;
}

const BOOTSTRAP = `const { workerData } = require('node:worker_threads');
(async () => {
  (await import(workerData.tsx)).register();
  await import(workerData.entry);
})();`;
