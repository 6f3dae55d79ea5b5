import type { ServerFrame } from '../frames.ts';
import type { CallFailure } from '../record.ts';

/** A voice call's voice, as the session drives it (src/calls/voice/pipeline.ts and realtime sessions implement it). */
export interface CallVoice {
  /** An utterance whose text streams in as the LLM writes it. */
  begin(id: string): { delta(text: string): void; end(): void };
  /** An utterance whose text is whole (the greeting, a filler). */
  say(id: string, text: string): void;
  /** Something is being said or waits to be. */
  readonly speaking: boolean;
  /** Barge-in: stop now; every utterance not over is reported spoken, interrupted, with what was heard. */
  interrupt(): void;
  /** The call fails: say this if the voice still can (a fallback voice when the TTS provider is what failed). */
  apologize(text: string, failure: CallFailure): Promise<void>;
  close(): Promise<void>;
}

/** What a voice tells its session. */
export interface VoiceHost {
  frame(frame: ServerFrame): void;
  /** The caller started speaking (the session decides whether it is a barge-in). */
  speechStarted(): void;
  /** The caller said this; `endedAt` is performance.now() when the VAD decided the speech ended. */
  userSaid(text: string, endedAt: number): void;
  firstAudio(id: string, at: number): void;
  spoken(id: string, heard: string, interrupted: boolean): void;
  failed(failure: CallFailure): void;
}
