/** A real webhook receiver on loopback that records every request and answers as the test says. */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  body: any;
  arrivedAt: number;
}

export interface Answer {
  status?: number;
  body?: string;
  contentType?: string;
  delayMs?: number;
}

export interface Receiver {
  url: string;
  requests: Received[];
  answer: (request: Received, index: number) => Answer | Promise<Answer>;
  /** Called just before the response is written (benchmarks). */
  onRespond?: () => void;
  /** Called when a request has fully arrived (benchmarks). */
  onArrive?: () => void;
  close(): Promise<void>;
}

export async function startReceiver(host: '127.0.0.1' | '::1' = '127.0.0.1'): Promise<Receiver> {
  const state: Omit<Receiver, 'url' | 'close'> = { requests: [], answer: () => ({ body: 'ok' }) };
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      state.onArrive?.();
      const rawBody = Buffer.concat(parts).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = null;
      }
      const received: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, rawBody, body, arrivedAt: performance.now() };
      const index = state.requests.push(received) - 1;
      void (async () => {
        const answer = await state.answer(received, index);
        if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
        if (res.destroyed) return;
        state.onRespond?.();
        res.writeHead(answer.status ?? 200, { 'content-type': answer.contentType ?? 'text/plain' }).end(answer.body ?? '');
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://${host === '::1' ? '[::1]' : host}:${port}/tools`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  });
}
