import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** All of a request's headers must arrive within this long (or the request timeout, if shorter). */
export const HEADERS_TIMEOUT_MS = 10_000;
/** A connection that neither sends nor reads for this long is closed. */
export const CONNECTION_IDLE_MS = 60_000;
/** How often Node looks for requests past their header or request timeout (its default is 30 s). */
export const TIMEOUT_SWEEP_MS = 1_000;

export interface ConnectionLimits {
  /** Open connections one client address may hold; more are closed at once. */
  perAddress: number;
  /** Open connections in all. */
  total: number;
}

/**
 * Caps open connections per client address and in all, so one client cannot hold every
 * descriptor of the process. (Request, header and idle timeouts are Fastify options: see app.ts.)
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
