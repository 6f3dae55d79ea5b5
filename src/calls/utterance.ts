import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { TurnLatency } from './turns/latency.ts';

/**
 * What an utterance is for: an answer the LLM writes, the greeting, a filler while tools run,
 * or a sentence said for a call-control tool (end_call, transfer_call).
 */
export type UtteranceKind = 'answer' | 'greeting' | 'filler' | 'announcement';

/**
 * One thing the assistant says on a voice call, from the moment it is handed to the voice until
 * it is over (played to the end, or cut by the caller), like livekit's SpeechHandle. The session
 * keeps one per utterance instead of a map per property: the history message it speaks (cut to
 * what was heard on a barge-in), the latency of its first audio, what the caller heard, and a
 * promise for its end that a tool's announcement waits on.
 */
export class Utterance {
  /** The text handed to the voice so far (an answer's grows as the LLM streams). */
  text = '';
  /** The LLM history message it speaks; none for a filler (kept out of the history). */
  message: ChatCompletionMessageParam | undefined;
  /** ms from the end of the caller's turn to its first audio frame; set for the first output of a turn. */
  latencyMs: number | undefined;
  /** The first output of a voice turn: where the time went, and how the caller's turn was ended. */
  latency: TurnLatency | undefined;
  endpointing: 'smart' | 'vad' | 'provider' | undefined;
  /** Where it lies in the call's audio (ms from its start): its first frame, and the end of what was heard. */
  startMs: number | undefined;
  endMs: number | undefined;
  /** What the caller heard of it, once it is over. */
  heard: string | null = null;
  /** The caller spoke over it. */
  interrupted = false;
  /** Settles once it is over. */
  readonly done: Promise<void>;
  #over: () => void = () => {};

  constructor(readonly id: string, readonly kind: UtteranceKind, message?: ChatCompletionMessageParam) {
    this.message = message;
    this.done = new Promise((resolve) => (this.#over = resolve));
  }

  get over(): boolean {
    return this.heard !== null;
  }

  /** It is over: `heard` is what went out of it, `interrupted` when the caller cut it. */
  end(heard: string, interrupted: boolean): void {
    if (this.over) return;
    this.heard = heard;
    this.interrupted = interrupted;
    this.#over();
  }
}
