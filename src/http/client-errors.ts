import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.ts';
import { AppError, errorEnvelope } from './errors.ts';

/**
 * How long a socket answered by the handler below stays open for the client to read the
 * answer. Closing at once would make the kernel reset a connection whose client is still
 * sending (the rest of an oversized header), and a reset can discard the answer unread.
 */
export const CLIENT_ERROR_CLOSE_MS = 2_000;

/** Node's own errors for a request it could not parse or that came too slowly, as our errors. */
function appErrorOf(err: NodeJS.ErrnoException): AppError {
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    return new AppError(431, 'Request headers are too large', [{ path: '(headers)', message: 'must be at most 16 KiB in all' }]);
  }
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return new AppError(408, 'The request did not arrive in time', [{ path: '(request)', message: 'headers and body must arrive within the request timeout' }]);
  }
  return new AppError(400, 'The request is not valid HTTP', [{ path: '(request)', message: 'could not be parsed' }]);
}

/**
 * Fastify's `clientErrorHandler`: errors Node's HTTP parser raises before any route sees the
 * request (a malformed request line or header, headers over 16 KiB, a request that timed out)
 * are answered in the service's error envelope like every other error, then the connection is
 * closed: nothing more is read from a client that sent a broken request.
 */
export function clientErrorHandler(clock: Clock, log: FastifyBaseLogger) {
  const answered = new WeakSet<Socket>();
  return (err: NodeJS.ErrnoException, socket: Socket): void => {
    // A reset connection has no one to answer; a broken parser reports each later chunk again.
    if (err.code === 'ECONNRESET' || socket.destroyed || answered.has(socket)) return;
    answered.add(socket);
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (!socket.writable || inFlight?.headersSent) {
      // An answer is already on its way on this connection: another one would corrupt it.
      socket.destroy();
      return;
    }
    const error = appErrorOf(err);
    const traceId = randomUUID().replaceAll('-', '');
    log.debug({ code: err.code, status: error.status, traceId }, 'client error');
    const body = JSON.stringify(errorEnvelope(error, traceId, clock.now()));
    socket.end(
      `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${traceId}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
    // Whatever the client still sends is read and dropped until it closes, or the grace ends.
    socket.resume();
    const timer = setTimeout(() => socket.destroy(), CLIENT_ERROR_CLOSE_MS);
    socket.once('close', () => clearTimeout(timer));
  };
}
