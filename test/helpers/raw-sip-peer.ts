// A bare UDP socket speaking SIP by hand, for tests that need to see every retransmission
// (or misbehave on purpose): it records what arrives and sends exactly what it is given.
import dgram from 'node:dgram';
import { SipHeaders, parseMessage, serializeMessage } from '../../src/sip/message.ts';
import type { SipMessage, SipRequest, SipResponse } from '../../src/sip/message.ts';

export interface Received {
  msg: SipMessage;
  at: number;
  from: { address: string; port: number };
}

export interface RawPeer {
  port: number;
  received: Received[];
  /** Called for every message as it arrives (to answer at once, like a real peer). */
  onMessage: ((r: Received) => void) | null;
  send(msg: SipMessage | Buffer | string, port: number, address?: string): void;
  /** Waits until `count` received messages match. */
  waitFor(match: (m: SipMessage) => boolean, count?: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** A raw peer on `address` (another loopback address looks like another machine). */
export async function rawPeer(address = '127.0.0.1'): Promise<RawPeer> {
  const sock = dgram.createSocket('udp4');
  const received: Received[] = [];
  const waiters = new Set<() => void>();
  sock.on('message', (buf, rinfo) => {
    let r: Received;
    try {
      r = { msg: parseMessage(buf), at: performance.now(), from: { address: rinfo.address, port: rinfo.port } };
    } catch {
      return;
    }
    received.push(r);
    peer.onMessage?.(r);
    for (const w of [...waiters]) w();
  });
  await new Promise<void>((resolve) => sock.bind(0, address, resolve));
  const peer: RawPeer = {
    port: sock.address().port,
    received,
    onMessage: null,
    send(msg, port, address = '127.0.0.1') {
      const wire = Buffer.isBuffer(msg) ? msg : typeof msg === 'string' ? Buffer.from(msg) : serializeMessage(msg);
      sock.send(wire, port, address);
    },
    waitFor(match, count = 1, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const hits = received.filter((r) => match(r.msg));
          if (hits.length >= count) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(hits);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`only ${received.filter((r) => match(r.msg)).length} of ${count} expected messages; got ${received.map((r) => (r.msg.kind === 'request' ? r.msg.method : r.msg.status)).join(', ')}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => new Promise<void>((resolve) => sock.close(() => resolve())),
  };
  return peer;
}

export const isRequest = (method: string) => (m: SipMessage): m is SipRequest => m.kind === 'request' && m.method === method;
export const isResponse = (status: number, method?: string) => (m: SipMessage): m is SipResponse =>
  m.kind === 'response' && m.status === status && (method === undefined || (m.headers.get('CSeq') ?? '').endsWith(method));

/** A response to `req` the way a simple phone would write it. */
export function reply(req: SipRequest, status: number, reason: string, options: { toTag?: string; headers?: Record<string, string>; body?: string } = {}): SipResponse {
  const headers = new SipHeaders();
  for (const v of req.headers.getAll('Via')) headers.append('Via', v);
  headers.append('From', req.headers.get('From') ?? '');
  const to = req.headers.get('To') ?? '';
  headers.append('To', options.toTag && !to.includes('tag=') ? `${to};tag=${options.toTag}` : to);
  headers.append('Call-ID', req.headers.get('Call-ID') ?? '');
  headers.append('CSeq', req.headers.get('CSeq') ?? '');
  for (const [k, v] of Object.entries(options.headers ?? {})) headers.append(k, v);
  if (options.body) headers.append('Content-Type', 'application/sdp');
  return { kind: 'response', status, reason, headers, body: Buffer.from(options.body ?? '') };
}

/** A request from the raw peer to `port`, with its own Via. */
export function request(method: string, uri: string, peerPort: number, fields: Record<string, string>, body = '', peerAddress = '127.0.0.1'): SipRequest {
  const headers = new SipHeaders();
  headers.append('Via', `SIP/2.0/UDP ${peerAddress}:${peerPort};branch=z9hG4bK${Math.random().toString(36).slice(2)};rport`);
  headers.append('Max-Forwards', '70');
  for (const [k, v] of Object.entries(fields)) headers.append(k, v);
  if (body) headers.append('Content-Type', 'application/sdp');
  return { kind: 'request', method, uri, headers, body: Buffer.from(body) };
}
