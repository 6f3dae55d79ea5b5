import type { LookupFunction } from 'node:net';
import type { ChatCompletionFunctionTool, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { CallFailure } from './failure.ts';
import type { ToolCallRequest } from './tool-call.ts';

/*
 * The call's LLM behind one interface, whatever the provider: the session and its turns speak
 * OpenAI's chat message shapes, and each client (llm-openai.ts for chat-completions servers,
 * llm-anthropic.ts for the Messages API) translates. Every client fails with an LlmError or an
 * LlmStallError, which say which provider failed and never carry a key.
 */

export interface LlmSettings {
  model: string;
  temperature: number | undefined;
}

export interface LlmRoundRequest {
  messages: readonly ChatCompletionMessageParam[];
  tools: readonly ChatCompletionFunctionTool[];
  settings: LlmSettings;
  /** `none` on the last round of a turn, so the model has to answer in words. */
  toolChoice: 'auto' | 'none';
  signal: AbortSignal;
  onDelta: (text: string) => void;
}

export interface LlmRound {
  text: string;
  toolCalls: ToolCallRequest[];
}

export interface Llm {
  /** One streamed answer: text deltas as they come, tool calls once complete. */
  round(request: LlmRoundRequest): Promise<LlmRound>;
  /** Frees what the client holds (its connections); a call's own client is closed with the call. */
  close?(): Promise<void>;
}

export interface LlmClientOptions {
  /** null: the provider's public API. */
  baseUrl: string | null;
  apiKey: string | null;
  /** No first token within this long: the answer stalled. */
  firstTokenMs: number;
  /** No token for this long once the stream has begun: the answer stalled. */
  tokenGapMs: number;
  /** The provider named on failures (`llm:anthropic`); null for the platform's LLM (`llm`). */
  provider?: string | null;
  /** Resolves the host through the egress policy when the base URL is a tenant's. */
  lookup?: LookupFunction | undefined;
  /** Another provider follows (a fallback): fail at once instead of retrying this one. */
  failFast?: boolean;
}

/** The stream stopped giving tokens (a stalled server, a half-open connection). */
export class LlmStallError extends Error {
  override name = 'LlmStallError';
  constructor(readonly phase: 'first_token' | 'between_tokens', readonly afterMs: number, readonly provider: string | null = null) {
    super(phase === 'first_token' ? `no first token within ${afterMs / 1000} s` : `the stream stopped for ${afterMs / 1000} s`);
  }
}

/** A provider refused or failed: its status and its own words (scrubbed of anything key-shaped), or why nothing came back. */
export class LlmError extends Error {
  override name = 'LlmError';
  constructor(
    readonly provider: string | null,
    message: string,
    readonly statusCode: number | null = null,
    /** Worth asking again (a network failure, 408, 409, 429, 5xx, Anthropic's 529); a 4xx answer is not. */
    readonly retryable = statusCode === null || [408, 409, 429].includes(statusCode) || statusCode >= 500,
  ) {
    super(message.replace(KEY_LIKE, '[key]').slice(0, 300));
  }
}

/** Anything shaped like a secret key in a provider's message is masked before it is logged or stored. */
const KEY_LIKE = /\b(sk|pk|rk|prl|xi|key|api)[-_][A-Za-z0-9_*.-]{6,}/gi;

/** One attempt at a round: `onChunk` on every piece of the stream (the stall watchdog rearms). */
export type StreamRound = (request: LlmRoundRequest, signal: AbortSignal, onChunk: () => void) => Promise<LlmRound>;

/**
 * A round with a stall watchdog, retried once when it failed before any output (a stall; with
 * `retryErrors`, also a network failure or an overloaded server, for a client whose library does
 * not retry them itself); once words have been streamed to the caller, a retry would say them
 * twice, so it fails. With a fallback behind it (failFast) it fails at once: the next provider
 * is the retry.
 */
export async function resilientRound(request: LlmRoundRequest, options: LlmClientOptions, stream: StreamRound, retryErrors = false): Promise<LlmRound> {
  for (let attempt = 1; ; attempt++) {
    let spoke = false;
    try {
      return await watchedRound({ ...request, onDelta: (text) => ((spoke = true), request.onDelta(text)) }, options, stream);
    } catch (err) {
      const retryable = err instanceof LlmStallError || (retryErrors && err instanceof LlmError && err.retryable);
      if (!retryable || spoke || attempt > 1 || options.failFast || request.signal.aborted) throw err;
    }
  }
}

/** One round with its own controller (SDKs leave a listener on the signal they are given) and a stall watchdog. */
async function watchedRound(request: LlmRoundRequest, options: LlmClientOptions, stream: StreamRound): Promise<LlmRound> {
  const round = new AbortController();
  const abort = () => round.abort();
  request.signal.addEventListener('abort', abort, { once: true });
  // Set by the watchdog's timer (a holder, so the checks below see what the timer wrote).
  const watch: { stall: LlmStallError | null } = { stall: null };
  let timer: NodeJS.Timeout | undefined;
  const arm = (phase: LlmStallError['phase'], ms: number) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      watch.stall = new LlmStallError(phase, ms, options.provider ?? null);
      round.abort();
    }, ms);
  };
  arm('first_token', options.firstTokenMs);
  try {
    const result = await stream(request, round.signal, () => arm('between_tokens', options.tokenGapMs));
    // A stream aborted by the watchdog may end quietly, as if it had finished: a stall must not pass for an answer.
    if (watch.stall) throw watch.stall;
    return result;
  } catch (err) {
    throw watch.stall ?? err;
  } finally {
    clearTimeout(timer);
    request.signal.removeEventListener('abort', abort);
  }
}

/** What went wrong with the LLM, for the log, the error frame and the call record: a status and the provider's words, never a key. */
export function describeLlmFailure(err: unknown): CallFailure {
  const provider = err instanceof LlmStallError || err instanceof LlmError ? err.provider : null;
  const source = provider ? `llm:${provider}` : 'llm';
  if (err instanceof LlmStallError) return { source, statusCode: null, message: err.message };
  if (err instanceof LlmError) return { source, statusCode: err.statusCode, message: err.message };
  return { source, statusCode: null, message: err instanceof Error ? err.name : 'unknown error' };
}
