import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { Agent, request as send, type Dispatcher } from 'undici';
import { anthropicConversation, anthropicTools } from './anthropic-messages.ts';
import { LlmError, resilientRound, type Llm, type LlmClientOptions, type LlmRound, type LlmRoundRequest } from './llm.ts';
import type { ToolCallRequest } from './tool-call.ts';
import { MAX_TOOL_ARGUMENTS_BYTES } from './tool-arguments.ts';

/**
 * Anthropic's Messages API (`POST {base}/v1/messages`), streamed as server-sent events, with tool
 * use. Our own client rather than `@anthropic-ai/sdk`: the SDK reads ANTHROPIC_CUSTOM_HEADERS and
 * ANTHROPIC_LOG from process.env whatever it is given (config.ts must stay the only reader of the
 * environment, and an operator's variable must not add headers to a tenant's requests), and it
 * brings 33 MB with OpenTelemetry into the install; the protocol is one POST and a documented
 * event stream, read here with `eventsource-parser`.
 */
export const ANTHROPIC_VERSION = '2023-06-01';
/** Anthropic requires max_tokens; a spoken answer is a few sentences. */
export const ANTHROPIC_MAX_TOKENS = 1024;
/** A stream buffers at most this much of one event: a server that never ends a line cannot grow memory. */
const MAX_EVENT_CHARS = 1 << 20;

export function createAnthropicLlm(options: LlmClientOptions): Llm {
  const provider = options.provider ?? 'anthropic';
  const agent = options.lookup ? new Agent({ connect: { lookup: options.lookup } }) : undefined;
  const url = `${(options.baseUrl ?? 'https://api.anthropic.com').replace(/\/+$/, '')}/v1/messages`;
  return {
    round: (request) => resilientRound(request, options, (r, signal, onChunk) => streamRound(url, options, provider, agent, r, signal, onChunk), true),
    close: async () => void (await agent?.destroy()),
  };
}

function body(request: LlmRoundRequest) {
  const { system, messages } = anthropicConversation(request.messages);
  const { temperature } = request.settings;
  return {
    model: request.settings.model,
    max_tokens: ANTHROPIC_MAX_TOKENS,
    stream: true,
    ...(system ? { system } : {}),
    messages,
    // Anthropic's range is 0..1; the strategy's (OpenAI's) is 0..2.
    ...(temperature !== undefined ? { temperature: Math.min(1, temperature) } : {}),
    ...(request.tools.length ? { tools: anthropicTools(request.tools), tool_choice: { type: request.toolChoice } } : {}),
  };
}

async function streamRound(
  url: string, options: LlmClientOptions, provider: string, agent: Dispatcher | undefined,
  request: LlmRoundRequest, signal: AbortSignal, onChunk: () => void,
): Promise<LlmRound> {
  let res: Dispatcher.ResponseData;
  try {
    res = await send(url, {
      method: 'POST', signal, ...(agent ? { dispatcher: agent } : {}),
      headers: {
        'content-type': 'application/json', 'anthropic-version': ANTHROPIC_VERSION,
        ...(options.apiKey ? { 'x-api-key': options.apiKey } : {}),
      },
      body: JSON.stringify(body(request)),
      headersTimeout: 60_000, bodyTimeout: 0,
    });
  } catch (err) {
    if (signal.aborted) throw err;
    throw new LlmError(provider, 'could not connect to the LLM endpoint');
  }
  if (res.statusCode !== 200) {
    const answer = await res.body.text().catch(() => '');
    throw new LlmError(provider, errorMessage(answer) ?? `HTTP ${res.statusCode}`, res.statusCode);
  }
  const reader = new EventReader(provider, request.onDelta);
  const parser = createParser({ maxBufferSize: MAX_EVENT_CHARS, onEvent: (event) => reader.read(event) });
  const decoder = new TextDecoder();
  try {
    for await (const chunk of res.body) {
      onChunk();
      parser.feed(decoder.decode(chunk as Buffer, { stream: true }));
      if (reader.stopped) break;
    }
  } catch (err) {
    if (signal.aborted || err instanceof LlmError) throw err;
    throw new LlmError(provider, 'the stream broke off');
  } finally {
    res.body.destroy();
  }
  return reader.result();
}

/** Anthropic's error body ({ type: "error", error: { type, message } }), its message. */
function errorMessage(text: string): string | null {
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    return typeof message === 'string' && message ? message : null;
  } catch {
    return null;
  }
}

/** The fields of the stream's events that are read. */
interface StreamEvent {
  type?: string;
  index?: number;
  content_block?: { type?: string; id?: string; name?: string; input?: Record<string, unknown>; text?: string };
  delta?: { type?: string; text?: string; partial_json?: string };
  error?: { type?: string; message?: string };
}

/** The status an error event's type stands for (the stream has already answered 200). */
const ERROR_STATUS: Record<string, number> = { overloaded_error: 529, api_error: 500, rate_limit_error: 429, invalid_request_error: 400, timeout_error: 504 };

/**
 * Reads the events of one streamed message: text deltas go out as they come, a tool_use block
 * collects its input's JSON from input_json_delta pieces, and message_stop ends it. An `error`
 * event fails the round with the provider's words; ping and event types it does not know are
 * passed over, as Anthropic's versioning policy asks.
 */
class EventReader {
  stopped = false;
  private text = '';
  private readonly blocks = new Map<number, ToolCallRequest & { input: string }>();

  constructor(private readonly provider: string, private readonly onDelta: (text: string) => void) {}

  read(event: EventSourceMessage): void {
    let data: StreamEvent;
    try {
      data = JSON.parse(event.data) as StreamEvent;
    } catch {
      throw new LlmError(this.provider, `an event that is not JSON (${event.event ?? 'message'})`);
    }
    const index = data.index ?? -1;
    switch (data.type) {
      case 'content_block_start': {
        const block = data.content_block;
        if (block?.type === 'tool_use') {
          const input = block.input && Object.keys(block.input).length ? JSON.stringify(block.input) : '';
          this.blocks.set(index, { id: block.id ?? '', name: block.name ?? '', arguments: '', input });
        } else if (block?.type === 'text' && block.text) this.delta(block.text);
        return;
      }
      case 'content_block_delta':
        if (data.delta?.type === 'text_delta') this.delta(data.delta.text ?? '');
        else if (data.delta?.type === 'input_json_delta') {
          const block = this.blocks.get(index);
          // Past the limit the rest is not kept: the call is refused for its size (tool-arguments.ts) all the same.
          if (block && block.arguments.length <= MAX_TOOL_ARGUMENTS_BYTES) block.arguments += data.delta.partial_json ?? '';
        }
        return;
      case 'message_stop':
        this.stopped = true;
        return;
      case 'error': {
        const type = data.error?.type ?? 'error';
        throw new LlmError(this.provider, data.error?.message ?? type, ERROR_STATUS[type] ?? null);
      }
      default: // message_start, content_block_stop, message_delta, ping, and types added later
    }
  }

  result(): LlmRound {
    if (!this.stopped) throw new LlmError(this.provider, 'the stream ended before message_stop');
    const toolCalls = [...this.blocks.entries()].sort(([a], [b]) => a - b).map(([, b]) => ({ id: b.id, name: b.name, arguments: b.arguments || b.input || '{}' }));
    return { text: this.text, toolCalls };
  }

  private delta(text: string): void {
    if (!text) return;
    this.text += text;
    this.onDelta(text);
  }
}
