import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/;
const REQUEST_ID = /^[\w.:@/+=-]{1,128}$/;

/**
 * The trace id of a request: the trace id of an incoming W3C `traceparent`, else a sane
 * `X-Request-Id`, else a fresh one. It is echoed in `X-Request-Id` and in every envelope.
 */
export function traceIdOf(req: IncomingMessage): string {
  const traceparent = req.headers.traceparent;
  if (typeof traceparent === 'string') {
    const match = TRACEPARENT.exec(traceparent.trim().toLowerCase());
    if (match?.[1] && !/^0+$/.test(match[1])) return match[1];
  }
  const requestId = req.headers['x-request-id'];
  if (typeof requestId === 'string' && REQUEST_ID.test(requestId)) return requestId;
  // randomUUID draws from a cached entropy pool, far cheaper per request than randomBytes.
  return randomUUID().replaceAll('-', '');
}
