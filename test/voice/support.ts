import assert from 'node:assert/strict';
import type { TtsChunk } from '../../src/voice/tts/types.ts';
import { concatPcm } from './fakes/audio.ts';

/** Everything a synthesize() call yields, joined, with the rates it used. */
export async function collect(chunks: AsyncIterable<TtsChunk>): Promise<{ pcm: Int16Array; rates: Set<number>; count: number }> {
  const parts: Int16Array[] = [];
  const rates = new Set<number>();
  for await (const chunk of chunks) {
    parts.push(chunk.pcm);
    rates.add(chunk.sampleRate);
  }
  return { pcm: concatPcm(parts), rates, count: parts.length };
}

/**
 * Reads until the first chunk, aborts, and returns how many chunks came after the abort (the
 * contract says none) and whether the iterator then ended.
 */
export async function abortAfterFirstChunk(chunks: (signal: AbortSignal) => AsyncIterable<TtsChunk>): Promise<{ before: number; after: number }> {
  const controller = new AbortController();
  let before = 0;
  let after = 0;
  for await (const _chunk of chunks(controller.signal)) {
    if (controller.signal.aborted) after++;
    else {
      before++;
      controller.abort();
    }
  }
  return { before, after };
}

/** Sockets, servers, timers and workers still alive, by kind, apart from what the runner itself holds. */
export function activeHandles(): string[] {
  return process.getActiveResourcesInfo().filter((kind) => kind !== 'TTYWrap' && kind !== 'PipeWrap' && kind !== 'FSReqCallback');
}

/** Waits for handles that close asynchronously (a socket's close event) to go; fails after `timeoutMs`. */
export async function assertNoHandlesBeyond(baseline: string[], timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const extra = [...activeHandles()];
    for (const kind of baseline) {
      const index = extra.indexOf(kind);
      if (index >= 0) extra.splice(index, 1);
    }
    if (extra.length === 0) return;
    if (Date.now() > deadline) assert.fail(`handles left open: ${extra.join(', ')}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
