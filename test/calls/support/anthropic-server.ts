/**
 * A fake of Anthropic's Messages API (`POST /v1/messages`, streamed) on 127.0.0.1, as Anthropic
 * documents it. It checks the `x-api-key` (one of the keys it is given, else 401
 * authentication_error) and `anthropic-version` headers, and the body: the fields the API takes,
 * `max_tokens`, the system prompt as a top-level field (never a message), messages of role user
 * or assistant whose content is a string or text, tool_use and tool_result blocks, every tool_use
 * answered by a tool_result in the next message, tools with an input_schema, a tool_choice, a
 * temperature within 0..1. A request it refuses is a 400 invalid_request_error, kept in
 * `problems`. It answers with the server-sent events of a streamed message: message_start,
 * content_block_start / content_block_delta (text_delta, input_json_delta in pieces) /
 * content_block_stop per block, a ping, message_delta with the stop reason, message_stop; or an
 * error status, or an `error` event in the middle of the stream.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Reply } from './llm-server.ts';

export interface AnthropicReply extends Reply {
  /** An `error` event (overloaded_error) once the stream has begun, after this many text deltas. */
  errorEventAfter?: number;
}

export interface AnthropicServer {
  /** The base URL a credential names (the client appends /v1/messages). */
  baseUrl: string;
  requests: any[];
  headers: IncomingHttpHeaders[];
  problems: string[];
  respond: (body: any, index: number) => AnthropicReply | Promise<AnthropicReply>;
  close(): Promise<void>;
}

const BODY_FIELDS = new Set(['model', 'max_tokens', 'messages', 'system', 'tools', 'tool_choice', 'stream', 'temperature', 'metadata', 'stop_sequences', 'top_k', 'top_p']);
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** What the documented API would refuse in a body, in its words as near as can be. */
export function messagesProblems(body: any): string[] {
  const wrong: string[] = [];
  for (const key of Object.keys(body ?? {})) if (!BODY_FIELDS.has(key)) wrong.push(`${key}: Extra inputs are not permitted`);
  if (typeof body?.model !== 'string' || !body.model) wrong.push('model: Field required');
  if (!Number.isInteger(body?.max_tokens) || body.max_tokens < 1) wrong.push('max_tokens: Field required');
  if (body?.temperature !== undefined && !(body.temperature >= 0 && body.temperature <= 1)) wrong.push('temperature: must be within 0..1');
  if (body?.system !== undefined && typeof body.system !== 'string' && !Array.isArray(body.system)) wrong.push('system: must be a string or text blocks');
  const tools: any[] = body?.tools ?? [];
  if (!Array.isArray(tools)) wrong.push('tools: must be a list');
  for (const [i, tool] of tools.entries()) {
    if (!TOOL_NAME.test(tool?.name ?? '')) wrong.push(`tools.${i}.name: must match ${TOOL_NAME}`);
    if (tool?.input_schema?.type !== 'object') wrong.push(`tools.${i}.input_schema: must be a JSON Schema of type object`);
    for (const key of Object.keys(tool ?? {})) if (!['name', 'description', 'input_schema'].includes(key)) wrong.push(`tools.${i}.${key}: Extra inputs are not permitted`);
  }
  if (body?.tool_choice !== undefined && !['auto', 'any', 'none', 'tool'].includes(body.tool_choice?.type)) wrong.push(`tool_choice.type: ${JSON.stringify(body.tool_choice)}`);
  if (!Array.isArray(body?.messages) || body.messages.length === 0) return [...wrong, 'messages: at least one message is required'];
  let open: string[] = [];
  for (const [i, message] of body.messages.entries()) {
    if (!['user', 'assistant'].includes(message?.role)) wrong.push(`messages.${i}.role: ${JSON.stringify(message?.role)} (system prompts go in the top-level system field)`);
    const blocks: any[] = typeof message?.content === 'string' ? [{ type: 'text', text: message.content }] : message?.content;
    if (!Array.isArray(blocks) || blocks.length === 0) {
      wrong.push(`messages.${i}.content: must be a string or a non-empty list of blocks`);
      continue;
    }
    const answered = new Set(blocks.filter((b) => b?.type === 'tool_result').map((b) => b.tool_use_id));
    const missing = open.filter((id) => !answered.has(id));
    if (missing.length) wrong.push(`messages.${i}: tool_use ids were found without tool_result blocks immediately after: ${missing.join(', ')}`);
    for (const id of answered) if (!open.includes(id)) wrong.push(`messages.${i}: unexpected tool_use_id found in tool_result blocks: ${id}`);
    open = [];
    for (const [j, block] of blocks.entries()) {
      const at = `messages.${i}.content.${j}`;
      if (block?.type === 'text') {
        if (typeof block.text !== 'string' || block.text === '') wrong.push(`${at}: text content blocks must be non-empty`);
      } else if (block?.type === 'tool_use') {
        if (message.role !== 'assistant') wrong.push(`${at}: tool_use only in assistant messages`);
        if (typeof block.id !== 'string' || typeof block.name !== 'string' || typeof block.input !== 'object' || block.input === null || Array.isArray(block.input)) wrong.push(`${at}: tool_use needs id, name and an input object`);
        if (!tools.length) wrong.push(`${at}: Requests which include tool_use or tool_result blocks must define tools`);
        open.push(block.id);
      } else if (block?.type === 'tool_result') {
        if (message.role !== 'user') wrong.push(`${at}: tool_result only in user messages`);
        if (typeof block.tool_use_id !== 'string') wrong.push(`${at}: tool_result needs tool_use_id`);
      } else wrong.push(`${at}.type: ${JSON.stringify(block?.type)}`);
    }
  }
  if (open.length) wrong.push(`the last message holds tool_use ids without results: ${open.join(', ')}`);
  return wrong;
}

const event = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/** The events of one streamed message answering `reply`. */
export function messageEvents(reply: AnthropicReply, model: string): string {
  let out = event('message_start', { message: { id: `msg_${randomUUID().replaceAll('-', '')}`, type: 'message', role: 'assistant', content: [], model, stop_reason: null, stop_sequence: null, usage: { input_tokens: 25, output_tokens: 1 } } });
  let index = 0;
  if (reply.text) {
    out += event('content_block_start', { index, content_block: { type: 'text', text: '' } });
    out += event('ping', {});
    for (const [n, word] of (reply.text.match(/\S+\s*/g) ?? [reply.text]).entries()) {
      if (reply.errorEventAfter === n) return out + event('error', { error: { type: 'overloaded_error', message: 'Overloaded' } });
      out += event('content_block_delta', { index, delta: { type: 'text_delta', text: word } });
    }
    out += event('content_block_stop', { index });
    index++;
  }
  for (const call of reply.toolCalls ?? []) {
    out += event('content_block_start', { index, content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} } });
    out += event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: '' } });
    const size = Math.ceil(call.arguments.length / 3) || 1;
    for (let at = 0; at < call.arguments.length; at += size) out += event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: call.arguments.slice(at, at + size) } });
    out += event('content_block_stop', { index });
    index++;
  }
  out += event('message_delta', { delta: { stop_reason: reply.toolCalls?.length ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 12 } });
  return out + event('message_stop', {});
}

const ERROR_TYPES: Record<number, string> = { 400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error', 429: 'rate_limit_error', 500: 'api_error', 529: 'overloaded_error' };

export async function startAnthropicServer(apiKeys: readonly string[]): Promise<AnthropicServer> {
  const state: Omit<AnthropicServer, 'baseUrl' | 'close'> = {
    requests: [], headers: [], problems: [],
    respond: (body) => ({ text: body.messages.at(-1)?.content?.[0]?.type === 'tool_result' ? 'Thank you, that helps.' : 'Hello from the fake Anthropic.' }),
  };
  const fail = (res: ServerResponse, status: number, message: string) =>
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${randomUUID()}` }).end(JSON.stringify({ type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message } }));
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => void (async () => {
      if (req.method !== 'POST' || req.url !== '/v1/messages') return fail(res, 404, `${req.method} ${req.url} not found`);
      state.headers.push(req.headers);
      const key = req.headers['x-api-key'];
      if (typeof key !== 'string' || !apiKeys.includes(key)) return fail(res, 401, 'invalid x-api-key');
      if (req.headers['anthropic-version'] !== '2023-06-01') return fail(res, 400, `anthropic-version: ${String(req.headers['anthropic-version'])}`);
      let body: any;
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8'));
      } catch {
        return fail(res, 400, 'the body is not JSON');
      }
      const index = state.requests.push(body) - 1;
      const wrong = [...messagesProblems(body), ...(body.stream === true ? [] : ['stream: this fake answers streamed requests only'])];
      if (wrong.length) {
        state.problems.push(...wrong);
        return fail(res, 400, wrong.join('; '));
      }
      const reply = await state.respond(body, index);
      if (reply.status) return fail(res, reply.status, reply.errorMessage ?? 'scripted failure');
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
      if (reply.stall) {
        if (reply.stall === 'after_first_token') res.write(event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }) + event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Well' } }));
        else res.flushHeaders();
        return;
      }
      res.end(messageEvents(reply, body.model));
    })());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  });
}
