import type { Worker } from 'node:worker_threads';
import { startThread } from './thread.ts';
import { sileroModelPath, type SileroModel, type SileroStep } from './vad-model.ts';

/**
 * Silero VAD on a worker thread. onnxruntime-node runs a session synchronously on the thread
 * that calls it (its `run` only defers to setImmediate): with 50 live calls, about 1,500 steps a
 * second took a third of the main thread, in bursts that delayed the 20 ms audio ticks of every
 * call. Here the steps run beside the event loop; the main thread only posts 576 floats and
 * reads back a probability and the next state. Same interface as the in-thread model.
 */
export type FromVadThread =
  | { kind: 'ready' }
  | { kind: 'load-failed'; message: string }
  | { kind: 'step'; id: number; probability: number; state: Float32Array }
  | { kind: 'fail'; id: number; message: string };

export interface ToVadThread {
  id: number;
  input: Float32Array;
  state: Float32Array;
}

const STATE_SIZE = 2 * 1 * 128;

export async function loadSileroWorker(modelPath: string = sileroModelPath()): Promise<SileroModel> {
  const { worker } = await startThread('Silero VAD', import.meta.url, 'vad.thread', { modelPath });
  return new WorkerSileroModel(worker);
}

interface Pending {
  resolve(step: SileroStep): void;
  reject(error: Error): void;
}

class WorkerSileroModel implements SileroModel {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed: Error | null = null;

  constructor(private readonly worker: Worker) {
    // An idle model must not keep the process alive; it is referenced while steps are in flight.
    worker.unref();
    worker.on('message', (message: FromVadThread) => this.receive(message));
    worker.on('error', (error) => this.failAll(new Error(`Silero VAD worker failed: ${error.message}`)));
    worker.on('exit', () => this.failAll(new Error('Silero VAD worker stopped')));
  }

  initialState(): Float32Array {
    return new Float32Array(STATE_SIZE);
  }

  step(input: Float32Array, state: Float32Array): Promise<SileroStep> {
    if (this.closed) return Promise.reject(this.closed);
    const id = this.nextId++;
    if (this.pending.size === 0) this.worker.ref();
    // Copied, not transferred: the VAD keeps `input` as the next window's context.
    this.worker.postMessage({ id, input, state } satisfies ToVadThread);
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.failAll(new Error('Silero VAD closed'));
    await this.worker.terminate();
  }

  private receive(message: FromVadThread): void {
    if (message.kind === 'ready' || message.kind === 'load-failed') return;
    const waiter = this.pending.get(message.id);
    if (!waiter) return;
    this.settle(message.id);
    if (message.kind === 'step') waiter.resolve({ probability: message.probability, state: message.state });
    else waiter.reject(new Error(`Silero VAD step failed: ${message.message}`));
  }

  private settle(id: number): void {
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker.unref();
  }

  private failAll(error: Error): void {
    this.closed ??= error;
    for (const [id, waiter] of this.pending) {
      this.settle(id);
      waiter.reject(error);
    }
  }
}
