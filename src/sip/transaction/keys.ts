// Transaction matching (RFC 3261 §17.1.3 for responses, §17.2.3 for requests).
import { parseCSeq, splitHeaderList } from '../message.ts';
import type { SipMessage, SipRequest } from '../message.ts';
import { parseVia } from '../uri.ts';
import type { Via } from '../uri.ts';

export const MAGIC_COOKIE = 'z9hG4bK';

export function topVia(msg: SipMessage): Via | null {
  const first = msg.headers.get('Via');
  if (first === undefined) return null;
  try {
    return parseVia(splitHeaderList(first)[0] ?? '');
  } catch {
    return null;
  }
}

function cseqMethod(msg: SipMessage): string | null {
  try {
    return parseCSeq(msg.headers.get('CSeq') ?? '').method.toUpperCase();
  } catch {
    return null;
  }
}

/** Key of the client transaction a response belongs to: top Via branch + CSeq method. */
export function clientKey(msg: SipMessage): string | null {
  const branch = topVia(msg)?.params.get('branch');
  const method = cseqMethod(msg);
  return branch && method ? `${branch}|${method}` : null;
}

/**
 * Key of the server transaction a request belongs to. An ACK matches its INVITE's
 * transaction (only for non-2xx; the ACK of a 2xx carries a new branch). Requests from
 * RFC 2543 peers (no magic cookie) are matched on Call-ID, CSeq number, From tag and Via.
 */
export function serverKey(req: SipRequest, methodOverride?: string): string | null {
  const via = topVia(req);
  if (!via) return null;
  const method = methodOverride ?? (req.method === 'ACK' ? 'INVITE' : req.method.toUpperCase());
  const branch = via.params.get('branch');
  const sentBy = `${via.host}:${via.port ?? ''}`;
  if (branch?.startsWith(MAGIC_COOKIE)) return `${branch}|${sentBy}|${method}`;
  let seq: number;
  try {
    seq = parseCSeq(req.headers.get('CSeq') ?? '').seq;
  } catch {
    return null;
  }
  return `2543|${req.headers.get('Call-ID') ?? ''}|${seq}|${req.headers.get('From') ?? ''}|${sentBy}|${method}`;
}
