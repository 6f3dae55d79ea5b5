import type { Clock } from '../clock.ts';
import type { ControlTool, ControlType } from './control-tools.ts';
import type { PacerClock } from '../voice/pacer-clock.ts';
import type { CallFailure } from './failure.ts';
import type { EndReason } from './frames.ts';
import type { Llm, LlmSettings } from './llm.ts';
import type { ProviderLedger } from './fallbacks/ledger.ts';
import type { LlmPlan } from './llm-plan.ts';
import type { EgressSend, ToolOutcome } from './tool-call.ts';
import type { TurnLatency } from './turns/latency.ts';
import type { VoicemailDetection } from './voicemail-detection.ts';
import type { ToolWebhook } from './tools.ts';
import type { VoicePlan } from './voice/plan.ts';

export interface Log {
  info(o: object, m?: string): void;
  warn(o: object, m?: string): void;
  error(o: object, m?: string): void;
}

export interface TranscriptEntry {
  /** `dtmf`: keys the caller pressed, gathered into one entry; `text` is the keys (`42#`). */
  role: 'assistant' | 'user' | 'dtmf';
  text: string;
  at: string;
  /** Assistant: ms from the end of the user's turn to the first output of this answer. */
  latencyMs?: number;
  /** Assistant: the caller spoke over it; `text` is what was heard. */
  interrupted?: boolean;
  /** Assistant, voice calls: where the time to this answer went (the caller's last speech to its first audio). */
  latency?: TurnLatency;
  /** Assistant, voice calls: how the caller's turn it answers was ended. */
  endpointing?: 'smart' | 'vad' | 'provider';
  /**
   * Voice calls: where the utterance lies in the call's audio (its recording), ms from its start:
   * the caller's first and last speech of a turn, the assistant's first and last audio heard.
   */
  startMs?: number;
  endMs?: number;
}

/** A voice call's turn-taking, counted over the whole call (docs/voice.md, "Turn-taking"). */
export interface TurnStats {
  /** Sound over the assistant that paused it but was not an interruption (a backchannel, a cough). */
  falseInterruptions: number;
  /** Answers started before the caller's turn was confirmed. */
  speculativeStarts: number;
  /** Of those, dropped because the caller spoke again (or said something else). */
  speculativeDiscards: number;
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
  /** A call-control tool: its type, and what the LLM was told (our own words: a transfer's outcome, the keys sent). */
  type?: ControlType;
  result?: string;
}

/** A line of the call's log, appended as the call runs. */
export type CallLogEntry = { kind: 'utterance'; entry: TranscriptEntry } | { kind: 'tool'; invocation: ToolInvocation };

export type CallOutcome = 'completed' | 'abandoned' | 'failed';

export interface CallEnd {
  reason: EndReason;
  outcome: CallOutcome;
  failure: CallFailure | null;
  transcript: readonly TranscriptEntry[];
  toolInvocations: readonly ToolInvocation[];
  /** Voice calls with a pipeline; absent otherwise. */
  turnStats?: TurnStats;
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
  /** The assistant's call-control tools (each offered when the call's transport can do it). */
  controls: ControlTool[];
  /** A voice call's plan; null for a text call. */
  voice: VoicePlan | null;
  /** Its assistant asks for its audio to be recorded (voice calls). */
  recording?: boolean;
  /** What a placed SIP call does about who answered (the agent's voicemail_detection); absent or null: nothing. */
  voicemailDetection?: VoicemailDetection | null;
  /** The call's LLMs (the primary, then its fallbacks); absent: the platform's LLM only. */
  llm?: LlmPlan;
  /** Set when the call cannot run (an LLM it names has no key): it fails as it starts, saying why. */
  failure?: CallFailure | null;
  /** The organization the call belongs to: the health of providers (their cool-down) is kept per organization. */
  organizationId?: string;
  /** Who serves each turn, kept as the call runs and written on its record (prepareCall gives every call one). */
  ledger?: ProviderLedger;
  /** The client answers the tool webhooks (a call started with `clientTools`: tests that mock tools); absent means their servers do. */
  clientTools?: boolean;
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
  /**
   * The session's timers and the time its voice turns are measured on (the voice kit's pacer clock
   * in the app, so one manual clock drives both in tests); the system's when absent. Not the
   * injected Clock, which tells the date but schedules nothing.
   */
  timers?: PacerClock;
  /** A caller's turn is taken to be answered (its words), after any speculative answer to it began. */
  turnTaken?: (text: string) => void;
}

/** A call ended by a client or a limit is completed once the user said something, else abandoned. */
export function outcomeOf(reason: EndReason, userSpoke: boolean): CallOutcome {
  if (reason === 'error' || reason === 'server_shutdown' || reason === 'server_lost') return 'failed';
  return userSpoke ? 'completed' : 'abandoned';
}
