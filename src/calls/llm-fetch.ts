import { Readable } from 'node:stream';
import { Agent, request } from 'undici';

/**
 * A `fetch` for the OpenAI SDK over `undici.request` on a keep-alive agent. Node 20's built-in
 * fetch, and web streams for the SSE body, cost about half a millisecond per LLM request
 * (bench/tool-call.bench.ts), and every tool call waits for two requests. The SDK keeps its
 * retries, timeouts and SSE parsing; only the transport changes. Bodies other than text or
 * bytes (chat completions never sends them) go through the built-in fetch.
 */
export function createLlmFetch(): { fetch: typeof fetch; close(): Promise<void> } {
  const agent = new Agent({ keepAliveTimeout: 30_000 });
  const llmFetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const { body } = init;
    if (input instanceof Request || (body != null && typeof body !== 'string' && !(body instanceof Uint8Array))) return fetch(input, init);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => (headers[name] = value));
    const res = await request(input, {
      method: (init.method ?? 'GET') as 'GET',
      headers,
      body: body ?? null,
      signal: init.signal ?? undefined,
      dispatcher: agent,
    });
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) responseHeaders.append(name, v);
    }
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    if (ok && responseHeaders.get('content-type')?.startsWith('text/event-stream')) {
      // The SDK only iterates a stream's `body` (any async iterable of bytes will do), so the
      // Node stream is handed over as it is, without a web-stream wrapper around every chunk.
      const response = new Response(null, { status: res.statusCode, headers: responseHeaders });
      Object.defineProperty(response, 'body', { value: res.body });
      return response;
    }
    const empty = res.statusCode === 204 || res.statusCode === 304 || init.method === 'HEAD';
    if (empty) res.body.resume();
    return new Response(empty ? null : Readable.toWeb(res.body), { status: res.statusCode, headers: responseHeaders });
  };
  return { fetch: llmFetch, close: () => agent.close() };
}
