/**
 * An OpenAI-compatible chat completions server the test controls: POST /v1/chat/completions
 * answered as SSE, tool-call deltas split over several chunks, then `data: [DONE]`. It keeps
 * every request body.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface Reply {
  text?: string;
  toolCalls?: ScriptedToolCall[];
  /** Answer with this HTTP status and a JSON error instead of a stream. */
  status?: number;
  /** The provider's error message with `status`. */
  errorMessage?: string;
  /**
   * Stream exactly these deltas (one chunk each) instead of text and tool calls: what servers
   * other than OpenAI's really send (tool calls without `index`, several under one index).
   */
  deltas?: unknown[];
  /** Start the stream, then go silent (before any token, or after the first one) until the client gives up. */
  stall?: 'before_first_token' | 'after_first_token';
}

export type Responder = (body: any, index: number) => Reply | Promise<Reply>;

export interface LlmServer {
  baseUrl: string;
  requests: any[];
  /** The headers of each request, in the same order. */
  headers: IncomingHttpHeaders[];
  /** The headers of each GET /v1/models (the start-up probe, parley doctor). */
  modelListHeaders: IncomingHttpHeaders[];
  respond: Responder;
  /** Called just before a stream with tool calls is written, in one piece with [DONE] (benchmarks). */
  onToolCallsWrite?: () => void;
  /** Called when a request has arrived, before its body is read (benchmarks). */
  onRequest?: () => void;
  close(): Promise<void>;
}

const chunk = (delta: unknown, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 0, model: 'test', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** Splits a string into n pieces (some may be empty when it is short). */
function pieces(text: string, n: number): string[] {
  const size = Math.ceil(text.length / n);
  return Array.from({ length: n }, (_, i) => text.slice(i * size, (i + 1) * size));
}

export function streamBody(reply: Reply): string {
  let out = chunk({ role: 'assistant', content: '' });
  if (reply.deltas) return `${out}${reply.deltas.map((delta) => chunk(delta)).join('')}${chunk({}, 'stop')}data: [DONE]\n\n`;
  if (reply.text) for (const word of reply.text.match(/\S+\s*/g) ?? [reply.text]) out += chunk({ content: word });
  for (const [index, call] of (reply.toolCalls ?? []).entries()) {
    out += chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] });
    for (const part of pieces(call.arguments, 3)) out += chunk({ tool_calls: [{ index, function: { arguments: part } }] });
  }
  out += chunk({}, reply.toolCalls?.length ? 'tool_calls' : 'stop');
  return `${out}data: [DONE]\n\n`;
}

const defaultResponder: Responder = (body) => {
  const last = body.messages.at(-1);
  return { text: last?.role === 'tool' ? `Tool said: ${last.content}` : 'Hello there.' };
};

export async function startLlmServer(): Promise<LlmServer> {
  const state: Omit<LlmServer, 'baseUrl' | 'close'> = { requests: [], headers: [], modelListHeaders: [], respond: defaultResponder };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    state.onRequest?.();
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      void (async () => {
        if (req.method === 'GET' && req.url === '/v1/models') {
          // What Parley's start-up probe and `parley doctor` ask for.
          state.modelListHeaders.push(req.headers);
          return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: 'test-model', object: 'model', created: 0, owned_by: 'parley-tests' }] }));
        }
        if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return res.writeHead(404).end();
        const body = JSON.parse(Buffer.concat(parts).toString('utf8'));
        const index = state.requests.push(body) - 1;
        state.headers.push(req.headers);
        const reply = await state.respond(body, index);
        if (reply.status) {
          res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: reply.errorMessage ?? 'scripted failure' } }));
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        if (reply.stall) {
          // Headers out, then silence: the connection stays open until the client aborts it.
          if (reply.stall === 'after_first_token') res.write(chunk({ role: 'assistant', content: 'Well' }));
          else res.flushHeaders();
          return;
        }
        const stream = streamBody(reply);
        if (reply.toolCalls?.length) state.onToolCallsWrite?.();
        res.end(stream);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  });
}
