import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, errorEnvelope } from './errors.ts';

/**
 * What the process holds for clients that do not read their answers (docs/limits.md). A client
 * that asks for large pages and never reads makes Node keep each answer in memory until the
 * kernel takes it; these caps bound that memory however many such clients there are.
 */
export const UNFLUSHED_OUTPUT = {
  /** Response bytes held in all: past it, new requests are answered 503 with Retry-After before any handler runs. */
  totalBytes: 64 * 1024 * 1024,
  /** Response bytes held for one connection: a connection still holding more when it asks again is closed. */
  perConnectionBytes: 8 * 1024 * 1024,
  /** Requests one connection may have in progress at once (HTTP/1.1 pipelining); more are answered 503. */
  perConnectionRequests: 4,
} as const;

export type UnflushedOutputLimits = { readonly [K in keyof typeof UNFLUSHED_OUTPUT]: number };

const RETRY_AFTER_SECONDS = 5;
/** Answers longer than this are handed to Node as bytes (see onSend). */
const LARGE_STRING = 64 * 1024;
const busy = () => new AppError(503, 'The service is busy sending earlier answers to slow clients; try again shortly');
const pipelined = () => new AppError(503, 'Too many requests in progress on this connection; wait for the answers before asking again');

/** What one connection holds: response bytes not yet flushed, requests in progress. */
interface Held {
  bytes: number;
  requests: number;
  /** Its socket closed: everything it held was released at once. */
  closed: boolean;
}
const HELD = Symbol('parley.heldOutput');
type HoldingSocket = Socket & { [HELD]?: Held };

declare module 'fastify' {
  interface FastifyReply {
    /** Response bytes counted as held for this reply until it finishes (http/backpressure.ts). */
    heldBytes: number;
    /** This reply counts as one of its connection's requests in progress. */
    holdsPlace: boolean;
  }
}

function sizeOf(payload: unknown): number {
  if (typeof payload === 'string') return Buffer.byteLength(payload);
  if (Buffer.isBuffer(payload)) return payload.length;
  return 0; // streams are written as they are read; Node's own backpressure holds them
}

/**
 * Counts each response's bytes from onSend until they are flushed to the kernel (the
 * response's `finish`) or dropped (`close`), per connection and in all, and refuses work that
 * would grow that count without bound:
 * - a request on a connection that still holds more than `perConnectionBytes` closes it, and
 *   one past `perConnectionRequests` in progress on its connection is answered 503 (a client
 *   pipelining requests without reading the answers: Node reads a whole chunk of them at once);
 * - a request that arrives while more than `totalBytes` are held is answered 503 at once;
 * - a GET answered while more than `totalBytes` are held gets the 503 instead of its answer
 *   (requests that arrive together all pass the first check before any is answered).
 * So the total passes `totalBytes` by one answer at most, and once it has, further requests are
 * refused before any work is done for them. Answers to writes are never replaced: their change
 * is made, and the client must learn it.
 */
export function limitUnflushedOutput(app: FastifyInstance, limits: UnflushedOutputLimits = UNFLUSHED_OUTPUT): void {
  let total = 0;
  // What each connection holds lives on its socket, set up on its first request with one 'close'
  // listener that releases it all: a response that never finishes (its client gone) is released
  // there, one that finishes by the onResponse hook below. Per request this costs two numbers on
  // the reply, not a listener or a weak map entry (see docs/performance.md).
  const of = (socket: HoldingSocket): Held => {
    let held = socket[HELD];
    if (!held) {
      const entry: Held = (held = socket[HELD] = { bytes: 0, requests: 0, closed: false });
      socket.once('close', () => {
        total -= entry.bytes;
        entry.bytes = 0;
        entry.closed = true;
      });
    }
    return held;
  };
  app.decorateReply('heldBytes', 0);
  app.decorateReply('holdsPlace', false);

  const refuseSocket = (request: FastifyRequest): boolean => {
    const socket = request.raw.socket as HoldingSocket;
    const bytes = socket[HELD]?.bytes ?? 0;
    if (bytes <= limits.perConnectionBytes) return false;
    request.log.warn({ heldBytes: bytes }, 'closing a connection that does not read its answers');
    socket.destroy();
    return true;
  };

  const refuse = (reply: FastifyReply, error: AppError, done: (error: AppError) => void) => {
    reply.header('retry-after', String(RETRY_AFTER_SECONDS));
    done(error);
  };

  app.addHook('onRequest', (request, reply, done) => {
    if (refuseSocket(request)) {
      reply.hijack();
      return done();
    }
    const connection = of(request.raw.socket);
    if (connection.requests >= limits.perConnectionRequests) return refuse(reply, pipelined(), done);
    connection.requests++;
    reply.holdsPlace = true;
    if (total > limits.totalBytes) return refuse(reply, busy(), done);
    done();
  });

  app.addHook('onSend', (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, body: unknown) => void) => {
    if (refuseSocket(request)) return done(null, payload);
    let body = payload;
    const safe = request.method === 'GET' || request.method === 'HEAD';
    if (safe && reply.statusCode < 300 && total > limits.totalBytes) {
      reply.removeHeader('etag');
      reply.code(503).header('retry-after', String(RETRY_AFTER_SECONDS)).header('content-type', 'application/json; charset=utf-8');
      body = JSON.stringify(errorEnvelope(busy(), request.id, app.ctx.clock.now()));
    }
    // Node writes a string by encoding it into storage sized for the worst case (3 bytes a
    // character) and keeps that, and the string, until the kernel takes it: a large answer as
    // bytes is held once, at its real size.
    if (typeof body === 'string' && body.length > LARGE_STRING) body = Buffer.from(body);
    const socket = request.raw.socket as HoldingSocket;
    // Nothing will be held for a client already gone, and its 'close' has passed: count nothing.
    if (socket.destroyed || reply.raw.destroyed) return done(null, body);
    const size = sizeOf(body);
    const connection = of(socket);
    total += size;
    connection.bytes += size;
    reply.heldBytes += size;
    done(null, body);
  });

  // Finished ('finish': its bytes are with the kernel) or failed: the response releases its place
  // and its bytes, unless its connection closed first and released them all.
  app.addHook('onResponse', (request, reply, done) => {
    const connection = (request.raw.socket as HoldingSocket | null)?.[HELD];
    if (connection && !connection.closed) {
      if (reply.holdsPlace) connection.requests--;
      total -= reply.heldBytes;
      connection.bytes -= reply.heldBytes;
    }
    reply.holdsPlace = false;
    reply.heldBytes = 0;
    done();
  });
}
