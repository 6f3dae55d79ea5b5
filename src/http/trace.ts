import { randomFillSync } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/;
const REQUEST_ID = /^[\w.:@/+=-]{1,128}$/;

/** Random bytes drawn at once for fresh trace ids: 256 ids per refill. */
const POOL_BYTES = 4096;

/**
 * The trace ids of one app's requests (Fastify's `genReqId`): the trace id of an incoming W3C
 * `traceparent`, else a sane `X-Request-Id`, else a fresh one, 32 hex digits of 16 random bytes
 * drawn from a pool of its own (one system call per 256 ids; about a third of the cost of a
 * UUID without its dashes). It is echoed in `X-Request-Id` and in every envelope.
 */
export function traceIds(): (req: IncomingMessage) => string {
  const pool = Buffer.alloc(POOL_BYTES);
  let used = POOL_BYTES;
  return (req) => {
    const traceparent = req.headers.traceparent;
    if (typeof traceparent === 'string') {
      const match = TRACEPARENT.exec(traceparent.trim().toLowerCase());
      if (match?.[1] && !/^0+$/.test(match[1])) return match[1];
    }
    const requestId = req.headers['x-request-id'];
    if (typeof requestId === 'string' && REQUEST_ID.test(requestId)) return requestId;
    if (used === POOL_BYTES) {
      randomFillSync(pool);
      used = 0;
    }
    used += 16;
    return pool.toString('hex', used - 16, used);
  };
}
