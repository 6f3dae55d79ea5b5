import OpenAI from 'openai';
import type { ChatCompletionFunctionTool, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { CallFailure } from './failure.ts';
import type { ToolCallRequest } from './tool-call.ts';
import { MAX_TOOL_ARGUMENTS_BYTES } from './tool-arguments.ts';

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
  /** One streamed chat completion: text deltas as they come, tool calls once complete. */
  round(request: LlmRoundRequest): Promise<LlmRound>;
}

export interface LlmOptions {
  baseUrl: string | null;
  apiKey: string | null;
  /** No first token within this long: the answer stalled. */
  firstTokenMs: number;
  /** No token for this long once the stream has begun: the answer stalled. */
  tokenGapMs: number;
}

/** The stream stopped giving tokens (a stalled server, a half-open connection). */
export class LlmStallError extends Error {
  override name = 'LlmStallError';
  constructor(readonly phase: 'first_token' | 'between_tokens', readonly afterMs: number) {
    super(phase === 'first_token' ? `no first token within ${afterMs / 1000} s` : `the stream stopped for ${afterMs / 1000} s`);
  }
}

/**
 * The OpenAI-compatible endpoint named by the config. Every SDK default that would read the
 * environment is given explicitly, so config.ts stays the only reader of process.env. Without
 * an API key no Authorization header is sent (local servers such as Ollama need none).
 */
export function createLlm(options: LlmOptions): Llm {
  const client = new OpenAI({
    // The SDK insists on a key; without one configured, the placeholder is never sent (see defaultHeaders).
    apiKey: options.apiKey ?? 'none',
    baseURL: options.baseUrl ?? 'https://api.openai.com/v1',
    adminAPIKey: null,
    organization: null,
    project: null,
    webhookSecret: null,
    ...(options.apiKey ? {} : { defaultHeaders: { Authorization: null } }),
    maxRetries: 1,
    timeout: 60_000,
    logLevel: 'off',
  });

  return {
    async round(request) {
      // A stall before any output is retried once, as the SDK retries a failed request; once
      // words have been streamed to the caller, a retry would say them twice, so it fails.
      for (let attempt = 1; ; attempt++) {
        let spoke = false;
        try {
          return await watchedRound(client, { ...request, onDelta: (text) => ((spoke = true), request.onDelta(text)) }, options);
        } catch (err) {
          if (!(err instanceof LlmStallError) || spoke || attempt > 1 || request.signal.aborted) throw err;
        }
      }
    },
  };
}

/** One round with its own controller (the SDK leaves a listener on the signal it is given) and a stall watchdog. */
async function watchedRound(client: OpenAI, request: LlmRoundRequest, options: LlmOptions): Promise<LlmRound> {
  const round = new AbortController();
  const abort = () => round.abort();
  request.signal.addEventListener('abort', abort, { once: true });
  // Set by the watchdog's timer (a holder, so the checks below see what the timer wrote).
  const watch: { stall: LlmStallError | null } = { stall: null };
  let timer: NodeJS.Timeout | undefined;
  const arm = (phase: LlmStallError['phase'], ms: number) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      watch.stall = new LlmStallError(phase, ms);
      round.abort();
    }, ms);
  };
  arm('first_token', options.firstTokenMs);
  try {
    const result = await streamRound(client, request, round.signal, () => arm('between_tokens', options.tokenGapMs));
    // The SDK ends an aborted stream quietly, as if it had finished: a stall must not pass for an answer.
    if (watch.stall) throw watch.stall;
    return result;
  } catch (err) {
    throw watch.stall ?? err;
  } finally {
    clearTimeout(timer);
    request.signal.removeEventListener('abort', abort);
  }
}

async function streamRound(client: OpenAI, request: LlmRoundRequest, signal: AbortSignal, onChunk: () => void): Promise<LlmRound> {
  const { messages, tools, settings, toolChoice, onDelta } = request;
  const stream = await client.chat.completions.create(
    {
      model: settings.model,
      messages: [...messages],
      stream: true,
      ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}),
      ...(tools.length ? { tools: [...tools], tool_choice: toolChoice } : {}),
    },
    { signal },
  );
  let text = '';
  // Tool calls arrive in pieces, keyed by index: the id and name once, the arguments in parts.
  const calls: ToolCallRequest[] = [];
  for await (const chunk of stream) {
    onChunk();
    const delta = chunk.choices[0]?.delta;
    if (!delta) continue;
    if (delta.content) {
      text += delta.content;
      onDelta(delta.content);
    }
    for (const piece of delta.tool_calls ?? []) {
      const call = (calls[piece.index] ??= { id: '', name: '', arguments: '' });
      if (piece.id) call.id = piece.id;
      if (piece.function?.name) call.name = piece.function.name;
      // Past the limit the rest is not kept: the call is refused for its size (tool-arguments.ts) all the same.
      if (piece.function?.arguments && call.arguments.length <= MAX_TOOL_ARGUMENTS_BYTES) call.arguments += piece.function.arguments;
    }
  }
  const toolCalls = calls.filter(Boolean).map((c) => (c.id ? c : { ...c, id: `call_${crypto.randomUUID().replaceAll('-', '')}` }));
  return { text, toolCalls };
}

/** Anything shaped like a secret key in a provider's message is masked before it is logged or stored. */
const KEY_LIKE = /\b(sk|pk|rk|prl|xi|key|api)[-_][A-Za-z0-9_*.-]{6,}/gi;

/** What went wrong with the LLM, for the log, the error frame and the call record: a status and the provider's words, never a key. */
export function describeLlmFailure(err: unknown): CallFailure {
  if (err instanceof LlmStallError) return { source: 'llm', statusCode: null, message: err.message };
  if (err instanceof OpenAI.APIConnectionError) return { source: 'llm', statusCode: null, message: 'could not connect to the LLM endpoint' };
  if (err instanceof OpenAI.APIError) {
    const provider = (err.error as { message?: unknown } | undefined)?.message;
    const message = typeof provider === 'string' && provider ? provider : err.message;
    const status: unknown = err.status;
    return { source: 'llm', statusCode: typeof status === 'number' ? status : null, message: message.replace(KEY_LIKE, '[key]').slice(0, 300) };
  }
  return { source: 'llm', statusCode: null, message: err instanceof Error ? err.name : 'unknown error' };
}
