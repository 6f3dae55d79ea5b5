import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../clock.ts';

/** All of a request's headers must arrive within this long (or the request timeout, if shorter). */
export const HEADERS_TIMEOUT_MS = 10_000;
/** A connection that neither sends nor reads for this long is closed. */
export const CONNECTION_IDLE_MS = 60_000;
/** How often Node looks for requests past their header or request timeout (its default is 30 s). */
export const TIMEOUT_SWEEP_MS = 1_000;
/** How often open connections are looked at for idleness: one is closed 60-65 s after its last byte. */
export const IDLE_SWEEP_MS = 5_000;

export interface ConnectionLimits {
  /** Open connections one client address may hold; more are closed at once. */
  perAddress: number;
  /** Open connections in all. */
  total: number;
}

/**
 * Caps open connections per client address and in all, so one client cannot hold every
 * descriptor of the process. (Request and header timeouts are Fastify options: see app.ts; idle
 * connections are closed by closeIdleConnections.)
 */
export function limitConnections(server: Server, limits: ConnectionLimits): void {
  server.maxConnections = limits.total;
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const count = (open.get(address) ?? 0) + 1;
    if (count > limits.perAddress) {
      socket.destroy();
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
  });
}

/**
 * An error answered before the request body was read (a 401 on a slow upload, a 413) closes
 * the connection, so the client cannot keep it open by trickling the rest of the body.
 */
export function closeAfterEarlyErrors(app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode >= 400 && !request.raw.complete) reply.header('connection', 'close');
    done(null, payload);
  });
  // A WebSocket upgrade takes its socket out of the HTTP server's hands (no timeouts, no
  // keep-alive): refused before the WebSocket plugin saw it (429 from the flood guard, 503 when
  // busy), nothing else would ever close it, and a flood of refused upgrades would hold sockets.
  app.addHook('onResponse', (request, reply, done) => {
    if (request.headers.upgrade !== undefined && reply.statusCode >= 400) request.raw.socket.destroy();
    done();
  });
}

/**
 * Closes a connection that has neither sent nor taken a byte for `idleMs`: one idle between
 * requests, one whose client stopped sending half way, one whose client stopped reading an answer
 * (the bytes Node still holds for it count as written, so its count stands still). A sweep every
 * IDLE_SWEEP_MS compares each connection's byte counts with the last sweep's, on the app's
 * clock. Node's own inactivity timeout (`server.setTimeout`) would do the same, but it sets up
 * and tears down a timer on every request, about a tenth of the CPU of the hottest read
 * (docs/performance.md). A WebSocket leaves the sweep when it upgrades (calls keep their own
 * pings and limits).
 */
export function closeIdleConnections(server: Server, clock: Clock, idleMs = CONNECTION_IDLE_MS): { sweep(): void; stop(): void } {
  const open = new Map<Socket, { bytes: number; since: number }>();
  server.on('connection', (socket: Socket) => {
    open.set(socket, { bytes: 0, since: clock.now().getTime() });
    socket.once('close', () => open.delete(socket));
  });
  server.on('upgrade', (_request, socket: Socket) => open.delete(socket));
  const sweep = () => {
    const now = clock.now().getTime();
    for (const [socket, seen] of open) {
      const bytes = socket.bytesRead + socket.bytesWritten;
      if (bytes !== seen.bytes) {
        seen.bytes = bytes;
        seen.since = now;
      } else if (now - seen.since >= idleMs) {
        open.delete(socket);
        socket.destroy();
      }
    }
  };
  const timer = setInterval(sweep, IDLE_SWEEP_MS).unref();
  return { sweep, stop: () => clearInterval(timer) };
}
