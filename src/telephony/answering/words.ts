import { createResampler, type Resampler } from '../../voice/audio/resample.ts';
import type { SttSession } from '../../voice/stt/stt.ts';
import { FRAME_MS } from './far-end.ts';

/** Speech frames kept before a segment starts, so its first word is whole. */
const BACK_FRAMES = 10;
/** Silence that ends a segment (a sentence's pause): its words are asked for then. */
const SEGMENT_PAUSE_FRAMES = 13;
/** A segment this long is cut, so a greeting without pauses still gives words early. */
const MAX_SEGMENT_FRAMES = 150;

export interface WordsEvents {
  /** Words said from `atMs` on (the segment's start); `final` when the segment is over. */
  heard(text: string, atMs: number, final: boolean): void;
  failed(error: unknown): void;
}

/**
 * The far end's speech to a speech-to-text session of its own during detection (the call's
 * voice does not hear the far end yet): segments of speech cut at sentence pauses, each asked
 * for its words as it ends, interim words as the provider gives them.
 */
export class WordsFeed {
  readonly #resampler: Resampler = createResampler(8000, 16000);
  readonly #back: Int16Array[] = [];
  #segment: { startMs: number; frames: number; silent: number } | null = null;
  #finals: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(private readonly stt: SttSession, private readonly events: WordsEvents) {
    stt.onInterim = (text) => {
      if (this.#segment && !this.#closed) events.heard(text, this.#segment.startMs, false);
    };
  }

  /** One frame (8 kHz) that began at `atMs`, and whether it was speech. */
  push(pcm8k: Int16Array, atMs: number, speech: boolean): void {
    if (this.#closed) return;
    const pcm = this.#resampler.process(pcm8k);
    const segment = this.#segment;
    if (!segment) {
      this.#back.push(pcm);
      if (this.#back.length > BACK_FRAMES) this.#back.shift();
      if (!speech) return;
      // Its words are dated from the speech's onset (the frame before this one), as the speech tracker dates an utterance.
      this.#segment = { startMs: atMs - FRAME_MS, frames: 0, silent: 0 };
      for (const frame of this.#back.splice(0)) this.stt.write(frame);
      return;
    }
    this.stt.write(pcm);
    segment.frames += 1;
    segment.silent = speech ? 0 : segment.silent + 1;
    if (segment.silent >= SEGMENT_PAUSE_FRAMES || segment.frames >= MAX_SEGMENT_FRAMES) this.#end(segment.startMs);
  }

  close(): Promise<void> {
    this.#closed = true;
    return this.stt.close();
  }

  #end(startMs: number): void {
    this.#segment = null;
    // One utterance at a time: a provider finalises them in order.
    this.#finals = this.#finals
      .then(() => this.stt.endUtterance())
      .then((text) => {
        if (!this.#closed && text.trim()) this.events.heard(text, startMs, true);
      })
      .catch((error: unknown) => {
        if (!this.#closed) this.events.failed(error);
      });
  }
}
