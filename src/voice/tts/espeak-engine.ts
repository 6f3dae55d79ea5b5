import type { Worker } from 'node:worker_threads';
import { startThread } from '../thread.ts';

/**
 * eSpeak NG compiled to WebAssembly (`@echogarden/espeak-ng-emscripten`), loaded once per
 * process on a worker thread. Synthesis is synchronous inside the module and costs about
 * 100 ms per sentence once warm (over a second while cold): on the main thread that would stall
 * every call's 20 ms audio clock, so it runs beside it, and chunks come back as they are made.
 * Sentences are spoken one at a time, in order (eSpeak is not re-entrant).
 */
export interface EspeakRequest {
  text: string;
  /** An eSpeak voice: `en`, `en-us`, `de`, … */
  voice: string;
  wordsPerMinute: number;
}

export interface EspeakSink {
  chunk(pcm: Int16Array): void;
  end(): void;
  fail(message: string): void;
}

export interface EspeakEngine {
  readonly sampleRate: number;
  /** Queues one sentence; the returned function stops it (or drops it if not yet started). */
  speak(request: EspeakRequest, sink: EspeakSink): () => void;
  /** Stops the worker. Sentences still queued fail. */
  close(): Promise<void>;
}

export type FromEspeakThread =
  | { kind: 'ready'; sampleRate: number }
  | { kind: 'load-failed'; message: string }
  | { kind: 'chunk'; id: number; pcm: Int16Array }
  | { kind: 'end'; id: number }
  | { kind: 'fail'; id: number; message: string };

/** One sentence for the thread, with the shared flag that stops it. */
export interface EspeakJob extends EspeakRequest {
  id: number;
  stop: SharedArrayBuffer;
}

export async function loadEspeakEngine(): Promise<EspeakEngine> {
  const moduleUrl = import.meta.resolve('@echogarden/espeak-ng-emscripten');
  const { worker, ready } = await startThread('espeak', import.meta.url, 'espeak.thread', { moduleUrl });
  return new WorkerEspeakEngine(worker, ready.sampleRate as number);
}

class WorkerEspeakEngine implements EspeakEngine {
  private readonly sinks = new Map<number, EspeakSink>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly worker: Worker, readonly sampleRate: number) {
    // An idle engine must not keep the process alive; it is referenced while it has work.
    worker.unref();
    worker.on('message', (message: FromEspeakThread) => this.receive(message));
    worker.on('error', (error) => this.failAll(`espeak worker failed: ${error.message}`));
    worker.on('exit', () => this.failAll('espeak worker stopped'));
  }

  speak(request: EspeakRequest, sink: EspeakSink): () => void {
    if (this.closed) {
      sink.fail('espeak engine closed');
      return () => {};
    }
    const id = this.nextId++;
    const stop = new SharedArrayBuffer(4);
    this.sinks.set(id, sink);
    if (this.sinks.size === 1) this.worker.ref();
    this.worker.postMessage({ id, stop, ...request } satisfies EspeakJob);
    return () => {
      Atomics.store(new Int32Array(stop), 0, 1);
      this.forget(id);
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.worker.terminate();
  }

  private receive(message: FromEspeakThread): void {
    if (message.kind === 'ready' || message.kind === 'load-failed') return;
    const sink = this.sinks.get(message.id);
    if (!sink) return; // a stopped sentence's last chunk
    if (message.kind === 'chunk') sink.chunk(message.pcm);
    else {
      this.forget(message.id);
      if (message.kind === 'end') sink.end();
      else sink.fail(message.message);
    }
  }

  private forget(id: number): void {
    if (this.sinks.delete(id) && this.sinks.size === 0) this.worker.unref();
  }

  private failAll(message: string): void {
    const sinks = [...this.sinks.values()];
    this.sinks.clear();
    for (const sink of sinks) sink.fail(message);
  }
}
