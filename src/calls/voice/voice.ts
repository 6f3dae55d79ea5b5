import type { ServerFrame } from '../frames.ts';
import type { CallFailure } from '../failure.ts';
import type { ToolCallRequest, ToolCallResult } from '../tool-call.ts';

/** What the session asks of any voice. */
interface VoiceBase {
  /** An utterance whose text is whole (the greeting, a filler). */
  say(id: string, text: string): void;
  /** Something is being said or waits to be. */
  readonly speaking: boolean;
  /** Barge-in: stop now; every utterance not over is reported spoken, interrupted, with what was heard. */
  interrupt(): void;
  /** The call fails: say this if the voice still can (a local voice when the provider is what failed). */
  apologize(text: string, failure: CallFailure): Promise<void>;
  close(): Promise<void>;
}

/** text_to_speech (src/calls/voice/pipeline.ts): speaks what the session's LLM turns write. */
export interface SpeakingVoice extends VoiceBase {
  readonly kind: 'pipeline';
  /** An utterance whose text streams in as the LLM writes it. */
  begin(id: string): { delta(text: string): void; end(): void };
}

/**
 * speech_to_speech (src/calls/voice/realtime.ts): a realtime model holds the conversation and
 * answers the caller itself; the session records it, runs its tools and keeps the limits.
 */
export interface ConversingVoice extends VoiceBase {
  readonly kind: 'realtime';
  /** The caller typed this (a `user_message`): the model is given it and answers it aloud. */
  tell(text: string): void;
}

/** A voice call's voice, as the session drives it. */
export type CallVoice = SpeakingVoice | ConversingVoice;

/** How a caller's turn ended, as the pipeline's turn-taker decided (times on the voice kit's clock, ms). */
export interface CallerTurn {
  /** When the caller's last speech sample of the turn was heard. */
  lastSpeechAt: number;
  /** When the turn was confirmed over. */
  endedAt: number;
  /** smart: the transcript and the silence; vad: the silence alone; provider: the STT said the speech ended. */
  endpointing: 'smart' | 'vad' | 'provider';
  /** Where the turn's speech lies in the call's audio (ms from its start), when its link is timed. */
  audio?: { startMs: number; endMs: number };
}

/** What a voice tells its session. Names say which way the audio went: `caller…` is what we heard, `played` what the caller heard of us. */
export interface VoiceHost {
  frame(frame: ServerFrame): void;
  /** The caller started speaking (a frame; the voice decides what it means for the assistant's speech). */
  callerSpeechStarted(): void;
  /** The caller spoke over the assistant, and it counts: the answer stops, only what was heard of it stays. */
  callerInterrupted(): void;
  /** Pipeline: the caller's turn so far reads complete; an answer may start, held until the turn is confirmed. */
  callerSpeculating(text: string): void;
  /** Pipeline: the caller spoke again before the turn was confirmed: drop the held answer. */
  callerSpeculationCancelled(): void;
  /** Pipeline: the caller's turn, to be answered. */
  callerSaid(text: string, turn: CallerTurn): void;
  /** Pipeline: sound over the assistant that was not an interruption (a backchannel, a cough); `text` what the STT made of it. */
  falseInterruption(text: string): void;
  /** Realtime: the caller's turn ended (`at`: performance.now()); the latency of the answer counts from here. */
  callerTurnEnded(at: number): void;
  /** Realtime: the caller said this in a turn the model answers itself; recorded and counted against the limits. */
  callerTranscribed(text: string): void;
  /** Realtime: the tool calls of one response, run through the tool webhooks; their results, in order. */
  runTools(calls: ToolCallRequest[]): Promise<ToolCallResult[]>;
  /** The first frame of our utterance `id` went out to the caller (`at`: performance.now()). */
  firstAudio(id: string, at: number): void;
  /** Our utterance `id` is over: `heard` is what the caller heard of it, `interrupted` when they cut it. */
  played(id: string, heard: string, interrupted: boolean): void;
  failed(failure: CallFailure): void;
}
