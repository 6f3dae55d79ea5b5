/**
 * The HTTP and WebSocket plumbing the fakes share: a server on 127.0.0.1, port 0, that lets each
 * fake refuse a WebSocket handshake with a real HTTP status, and closes every connection on close().
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';

export interface FakeServer {
  port: number;
  close(): Promise<void>;
}

export interface Handlers {
  http?(req: IncomingMessage, res: ServerResponse): void;
  /** Returns an HTTP status to refuse the upgrade with, or null to accept it. */
  upgrade?(req: IncomingMessage): number | null;
  connection?(socket: WebSocket, req: IncomingMessage): void;
}

export async function startFakeServer(handlers: Handlers): Promise<FakeServer> {
  const wss = new WebSocketServer({ noServer: true });
  const server: Server = createServer((req, res) => {
    if (handlers.http) handlers.http(req, res);
    else res.writeHead(404).end();
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const refuse = handlers.upgrade?.(req) ?? null;
    if (refuse !== null) {
      socket.end(`HTTP/1.1 ${refuse} Refused\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{"detail":"refused by the fake"}`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => handlers.connection?.(ws, req));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Records a protocol violation and makes the client see it, so a wrong field fails the test twice over. */
export class Violations {
  readonly list: string[] = [];
  add(message: string): void {
    this.list.push(message);
  }
  /** Throws when anything was wrong; tests call it at the end. */
  check(): void {
    if (this.list.length > 0) throw new Error(`the fake saw protocol violations:\n- ${this.list.join('\n- ')}`);
  }
}

export function sameKeys(object: Record<string, unknown>, allowed: readonly string[], required: readonly string[]): string | null {
  const extra = Object.keys(object).filter((key) => !allowed.includes(key));
  const missing = required.filter((key) => !(key in object));
  if (extra.length > 0) return `unexpected field(s) ${extra.join(', ')}`;
  if (missing.length > 0) return `missing field(s) ${missing.join(', ')}`;
  return null;
}

export const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A WebSocket message as text (the fakes only receive JSON text messages). */
export function messageText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data as ArrayBuffer).toString('utf8');
}
