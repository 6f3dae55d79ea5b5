// The Silero VAD's thread (see vad-worker.ts for why it runs beside the event loop).
import * as ort from 'onnxruntime-node';
import { threadData, threadPort } from './thread.ts';
import type { FromVadThread, ToVadThread } from './vad-worker.ts';

const port = threadPort();
const send = (message: FromVadThread, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
const errorText = (error: unknown) => String((error as Error | null)?.message ?? error);

const { modelPath } = threadData<{ modelPath: string }>();
const sr = new ort.Tensor('int64', BigInt64Array.of(16000n), []);
let session: ort.InferenceSession;

async function start(): Promise<void> {
  try {
    session = await ort.InferenceSession.create(modelPath, {
      intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all', logSeverityLevel: 3,
    });
  } catch (error) {
    // The starter terminates the thread on this answer.
    return send({ kind: 'load-failed', message: errorText(error) });
  }
  port.on('message', (job: ToVadThread) => void step(job));
  send({ kind: 'ready' });
}

async function step(job: ToVadThread): Promise<void> {
  try {
    const out = await session.run({
      input: new ort.Tensor('float32', job.input, [1, job.input.length]),
      state: new ort.Tensor('float32', job.state, [2, 1, 128]),
      sr,
    });
    const state = Float32Array.from(out.stateN!.data as Float32Array);
    send({ kind: 'step', id: job.id, probability: (out.output!.data as Float32Array)[0] ?? 0, state }, [state.buffer]);
  } catch (error) {
    send({ kind: 'fail', id: job.id, message: errorText(error) });
  }
}

void start();
