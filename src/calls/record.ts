import type { Clock } from '../clock.ts';
import type { EndReason } from './frames.ts';
import type { Llm, LlmSettings } from './llm.ts';
import type { EgressSend, ToolOutcome } from './tool-call.ts';
import type { ToolWebhook } from './tools.ts';
import type { VoicePlan } from './voice/plan.ts';

export interface Log {
  info(o: object, m?: string): void;
  warn(o: object, m?: string): void;
  error(o: object, m?: string): void;
}

export interface TranscriptEntry {
  role: 'assistant' | 'user';
  text: string;
  at: string;
  /** Assistant: ms from the end of the user's turn to the first output of this answer. */
  latencyMs?: number;
  /** Assistant: the caller spoke over it; `text` is what was heard. */
  interrupted?: boolean;
}

/** One tool call as the record keeps it: never a header value. */
export interface ToolInvocation {
  id: string;
  name: string;
  arguments: unknown;
  ok: boolean;
  statusCode: number | null;
  latencyMs: number;
  outcome: ToolOutcome;
  at: string;
}

/** A line of the call's log, appended as the call runs. */
export type CallLogEntry = { kind: 'utterance'; entry: TranscriptEntry } | { kind: 'tool'; invocation: ToolInvocation };

export type CallOutcome = 'completed' | 'abandoned' | 'failed';

/** Why a call failed, as the record, the log and the error frame say it (never a key). */
export interface CallFailure {
  /** What failed: `llm`, or a provider such as `tts:elevenlabs`, `stt:deepgram`. */
  source: string;
  statusCode: number | null;
  message: string;
}

export interface CallEnd {
  reason: EndReason;
  outcome: CallOutcome;
  failure: CallFailure | null;
  transcript: readonly TranscriptEntry[];
  toolInvocations: readonly ToolInvocation[];
}

/** Where a session writes its record: its log as it runs, and its end once. */
export interface CallRecorder {
  append(entries: readonly CallLogEntry[]): Promise<void>;
  finish(end: CallEnd): Promise<void>;
}

export interface CallSetup {
  callId: string;
  traceId: string;
  /** Prompt and greeting with the user values already filled in. */
  systemPrompt: string | null;
  greeting: string | null;
  /** Placeholders left unfilled in the prompt or greeting (no value, no default). */
  unfilled: string[];
  settings: LlmSettings;
  tools: ToolWebhook[];
  /** A voice call's plan; null for a text call. */
  voice: VoicePlan | null;
}

export interface SessionLimits {
  idleMs: number;
  maxMs: number;
  /** User turns one call may take. */
  maxTurns: number;
  /** Bytes of transcript (UTF-8 text of every utterance) one call may hold. */
  maxTranscriptBytes: number;
  /** Conversation messages sent to the LLM each round (the system prompt always goes too). */
  historyMessages: number;
}

export interface SessionDeps {
  llm: Llm;
  send: EgressSend;
  clock: Clock;
  log: Log;
  limits: SessionLimits;
  recorder: CallRecorder;
}

/** A call ended by a client or a limit is completed once the user said something, else abandoned. */
export function outcomeOf(reason: EndReason, userSpoke: boolean): CallOutcome {
  if (reason === 'error' || reason === 'server_shutdown' || reason === 'server_lost') return 'failed';
  return userSpoke ? 'completed' : 'abandoned';
}
