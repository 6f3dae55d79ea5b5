import OpenAI from 'openai';
import type { ChatCompletionFunctionTool, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { Config } from '../config.ts';
import { createLlmFetch } from './llm-fetch.ts';
import type { ToolCallRequest } from './tool-call.ts';

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
  close(): Promise<void>;
}

/**
 * The OpenAI-compatible endpoint named by the config. Every SDK default that would read the
 * environment is given explicitly, so config.ts stays the only reader of process.env. Without
 * an API key no Authorization header is sent (local servers such as Ollama need none).
 */
export function createLlm(config: Pick<Config, 'openaiBaseUrl' | 'openaiApiKey'>): Llm {
  const transport = createLlmFetch();
  const client = new OpenAI({
    fetch: transport.fetch,
    // The SDK insists on a key; without one configured, the placeholder is never sent (see defaultHeaders).
    apiKey: config.openaiApiKey ?? 'none',
    baseURL: config.openaiBaseUrl ?? 'https://api.openai.com/v1',
    adminAPIKey: null,
    organization: null,
    project: null,
    webhookSecret: null,
    ...(config.openaiApiKey ? {} : { defaultHeaders: { Authorization: null } }),
    maxRetries: 1,
    timeout: 60_000,
    logLevel: 'off',
  });

  return {
    close: () => transport.close(),
    async round(request) {
      // A controller per round: the SDK leaves a listener on the signal it is given, which on
      // the call's own signal would pile up turn after turn.
      const round = new AbortController();
      const abort = () => round.abort();
      request.signal.addEventListener('abort', abort, { once: true });
      try {
        return await streamRound(client, request, round.signal);
      } finally {
        request.signal.removeEventListener('abort', abort);
      }
    },
  };
}

async function streamRound(client: OpenAI, { messages, tools, settings, toolChoice, onDelta }: LlmRoundRequest, signal: AbortSignal): Promise<LlmRound> {
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
      if (piece.function?.arguments) call.arguments += piece.function.arguments;
    }
  }
  const toolCalls = calls.filter(Boolean).map((c) => (c.id ? c : { ...c, id: `call_${crypto.randomUUID().replaceAll('-', '')}` }));
  return { text, toolCalls };
}
