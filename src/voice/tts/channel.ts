import type { TtsChunk, TtsError } from './types.ts';

/**
 * The chunks of one sentence, fed by a provider's socket and read by `synthesize`'s caller.
 * Reading ends when the provider says the sentence is done, throws when it failed, and ends at
 * once (dropping whatever was buffered) when the sentence's signal is aborted.
 */
export class ChunkChannel implements AsyncIterable<TtsChunk> {
  private readonly buffered: TtsChunk[] = [];
  private done = false;
  private error: TtsError | null = null;
  private wake: (() => void) | null = null;
  private readonly onAbort = () => this.notify();

  constructor(private readonly signal: AbortSignal) {
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  get finished(): boolean {
    return this.done || this.error !== null;
  }

  push(chunk: TtsChunk): void {
    if (this.finished || chunk.pcm.length === 0) return;
    this.buffered.push(chunk);
    this.notify();
  }

  end(): void {
    this.done = true;
    this.notify();
  }

  fail(error: TtsError): void {
    if (this.finished) return;
    this.error = error;
    this.notify();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<TtsChunk> {
    try {
      for (;;) {
        if (this.signal.aborted) return;
        const next = this.buffered.shift();
        if (next) {
          yield next;
          continue;
        }
        if (this.error) throw this.error;
        if (this.done) return;
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      this.signal.removeEventListener('abort', this.onAbort);
      this.buffered.length = 0;
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}
