// Building blocks for requests and responses (RFC 3261 §8.1.1, §8.2.6).
import { randomBytes } from 'node:crypto';
import { SipHeaders } from './message.ts';
import type { SipRequest, SipResponse } from './message.ts';
import { MAGIC_COOKIE } from './transaction/keys.ts';
import { formatHost } from './uri.ts';

export const USER_AGENT = 'Parley';
export const ALLOW = 'INVITE, ACK, CANCEL, BYE, OPTIONS, INFO, REFER, NOTIFY, UPDATE';

export const token = (bytes = 8): string => randomBytes(bytes).toString('hex');
export const newBranch = (): string => `${MAGIC_COOKIE}${token(10)}`;

export const REASONS: Record<number, string> = {
  100: 'Trying', 180: 'Ringing', 181: 'Call Is Being Forwarded', 182: 'Queued', 183: 'Session Progress',
  200: 'OK', 202: 'Accepted', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found',
  405: 'Method Not Allowed', 408: 'Request Timeout', 415: 'Unsupported Media Type', 420: 'Bad Extension', 480: 'Temporarily Unavailable',
  481: 'Call/Transaction Does Not Exist', 486: 'Busy Here', 487: 'Request Terminated', 488: 'Not Acceptable Here',
  491: 'Request Pending', 500: 'Server Internal Error', 501: 'Not Implemented', 503: 'Service Unavailable',
  600: 'Busy Everywhere', 603: 'Decline', 604: 'Does Not Exist Anywhere',
};

export interface ResponseOptions {
  reason?: string;
  /**
   * Added to To when the request's To has no tag yet (never on 100 Trying). Without it such a
   * response gets a fresh tag: RFC 3261 §8.2.6.2 wants one on every response outside a dialog.
   */
  toTag?: string;
  headers?: Array<[string, string]>;
  body?: Buffer;
}

/** A response to `req`: Via, From, To, Call-ID and CSeq copied as §8.2.6.2 says. */
export function makeResponse(req: SipRequest, status: number, options: ResponseOptions = {}): SipResponse {
  const headers = new SipHeaders();
  for (const via of req.headers.getAll('Via')) headers.append('Via', via);
  headers.append('From', req.headers.get('From') ?? '');
  const to = req.headers.get('To') ?? '';
  const needsTag = status > 100 && !/;\s*tag\s*=/i.test(to);
  headers.append('To', needsTag ? `${to};tag=${options.toTag ?? token(6)}` : to);
  headers.append('Call-ID', req.headers.get('Call-ID') ?? '');
  headers.append('CSeq', req.headers.get('CSeq') ?? '');
  for (const [name, value] of options.headers ?? []) headers.append(name, value);
  if (!headers.has('Server')) headers.append('Server', USER_AGENT);
  return { kind: 'response', status, reason: options.reason ?? REASONS[status] ?? 'Unknown', headers, body: options.body ?? Buffer.alloc(0) };
}

/** Puts our Via on top of an outgoing request (RFC 3581 rport asks for the reply to come back to our port). */
export function addVia(req: SipRequest, transport: string, host: string, port: number, branch = newBranch()): SipRequest {
  const headers = new SipHeaders();
  headers.append('Via', `SIP/2.0/${transport.toUpperCase()} ${formatHost(host)}:${port};branch=${branch};rport`);
  for (const h of req.headers.entries()) if (h.name !== 'Via') headers.append(h.name, h.value);
  return { ...req, headers };
}

export function newRequest(method: string, uri: string, fields: Array<[string, string]>, body?: { type: string; data: Buffer }): SipRequest {
  const headers = new SipHeaders();
  for (const [name, value] of fields) headers.append(name, value);
  if (!headers.has('Max-Forwards')) headers.append('Max-Forwards', '70');
  if (!headers.has('User-Agent')) headers.append('User-Agent', USER_AGENT);
  if (body) headers.append('Content-Type', body.type);
  return { kind: 'request', method, uri, headers, body: body?.data ?? Buffer.alloc(0) };
}
