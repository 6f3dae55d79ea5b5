import OpenAI from 'openai';
import { Agent, fetch as undiciFetch } from 'undici';
import { LlmError, resilientRound, type Llm, type LlmClientOptions, type LlmRound, type LlmRoundRequest } from './llm.ts';
import { ToolCallAssembler } from './tool-call-assembler.ts';

/**
 * A chat-completions server: OpenAI, or any server with its API (Groq, Together, Fireworks,
 * vLLM, Ollama, llama.cpp). Every SDK default that would read the environment is given
 * explicitly, so config.ts stays the only reader of process.env. Without an API key no
 * Authorization header is sent (local servers need none). A tenant's base URL is reached through
 * undici with the egress policy's lookup, on an agent of the client's own, closed with it.
 */
export function createLlm(options: LlmClientOptions): Llm {
  const agent = options.lookup ? new Agent({ connect: { lookup: options.lookup } }) : null;
  const client = new OpenAI({
    // The SDK insists on a key; without one configured, the placeholder is never sent (see defaultHeaders).
    apiKey: options.apiKey ?? 'none',
    baseURL: options.baseUrl ?? 'https://api.openai.com/v1',
    adminAPIKey: null,
    organization: null,
    project: null,
    webhookSecret: null,
    ...(options.apiKey ? {} : { defaultHeaders: { Authorization: null } }),
    ...(agent ? { fetch: ((url: string, init: object) => undiciFetch(url, { ...init, dispatcher: agent })) as unknown as typeof fetch } : {}),
    maxRetries: options.failFast ? 0 : 1,
    timeout: 60_000,
    logLevel: 'off',
  });
  return {
    round: (request) => resilientRound(request, options, (r, signal, onChunk) => streamRound(client, r, signal, onChunk).catch((err: unknown) => {
      throw asLlmError(err, options.provider ?? null);
    })),
    close: async () => void (await agent?.destroy()),
  };
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
  const calls = new ToolCallAssembler();
  for await (const chunk of stream) {
    onChunk();
    const delta = chunk.choices[0]?.delta;
    if (!delta) continue;
    if (delta.content) {
      text += delta.content;
      onDelta(delta.content);
    }
    for (const piece of delta.tool_calls ?? []) calls.add(piece);
  }
  return { text, toolCalls: calls.done() };
}

/** The SDK's errors as ours: the status and the provider's words, or that nothing answered. */
function asLlmError(err: unknown, provider: string | null): unknown {
  if (err instanceof OpenAI.APIUserAbortError) return err;
  if (err instanceof OpenAI.APIConnectionError) return new LlmError(provider, 'could not connect to the LLM endpoint');
  if (err instanceof OpenAI.APIError) {
    const said = (err.error as { message?: unknown } | undefined)?.message;
    const status: unknown = err.status;
    return new LlmError(provider, typeof said === 'string' && said ? said : err.message, typeof status === 'number' ? status : null);
  }
  return err;
}
