import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.ts';
import type { EndReason } from './frames.ts';
import type { Llm, LlmSettings } from './llm.ts';
import type { EgressSend, ToolOutcome } from './tool-call.ts';
import type { ToolWebhook } from './tools.ts';

export interface TranscriptEntry {
  role: 'assistant' | 'user';
  text: string;
  at: string;
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

export type CallOutcome = 'completed' | 'abandoned' | 'failed';

export interface CallState {
  readonly transcript: readonly TranscriptEntry[];
  readonly toolInvocations: readonly ToolInvocation[];
}

/** Where a session writes its record: after each turn, and once at the end. */
export interface CallRecorder {
  checkpoint(state: CallState): Promise<void>;
  finish(state: CallState, reason: EndReason, outcome: CallOutcome): Promise<void>;
}

export interface CallSetup {
  callId: string;
  traceId: string;
  /** Prompt and greeting with the user values already filled in. */
  systemPrompt: string | null;
  greeting: string | null;
  settings: LlmSettings;
  tools: ToolWebhook[];
}

export interface SessionDeps {
  llm: Llm;
  send: EgressSend;
  clock: Clock;
  log: FastifyBaseLogger;
  limits: { idleMs: number; maxMs: number };
  recorder: CallRecorder;
}

/** A call ended by a client or a limit is completed once the user said something, else abandoned. */
export function outcomeOf(reason: EndReason, userSpoke: boolean): CallOutcome {
  if (reason === 'error' || reason === 'server_shutdown') return 'failed';
  return userSpoke ? 'completed' : 'abandoned';
}
