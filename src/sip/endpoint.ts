// Parley's long-lived SIP endpoint: UDP and TCP on one host and port, the transaction
// layer, the dialog table, and the entry points for calls out, calls in and registration.
import type { Clock } from '../clock.ts';
import { systemClock } from '../clock.ts';
import type { DialogHandle, SipCore, SipCounters } from './core.ts';
import { dialogKey } from './core.ts';
import { IncomingCall } from './inbound.ts';
import type { SipLogger } from './log.ts';
import { silentLog } from './log.ts';
import { headerParams, splitHeaderList } from './message.ts';
import type { SipMessage, SipRequest, SipResponse } from './message.ts';
import { inspectRequest, type Refusal } from './inspect.ts';
import { placeCall } from './outbound.ts';
import type { OutboundResult, PlaceCallOptions } from './outbound.ts';
import { DEFAULT_RATE_LIMIT, SourceRateLimiter } from './rate-limit.ts';
import type { RateLimitOptions } from './rate-limit.ts';
import { Registration } from './registration.ts';
import type { RegistrationOptions } from './registration.ts';
import { ALLOW, addVia, makeResponse } from './requests.ts';
import type { SipTransport } from './resolve.ts';
import type { TargetPolicy } from './target.ts';
import { DEFAULT_TIMERS } from './transaction/common.ts';
import type { Hop, SipTimerValues } from './transaction/common.ts';
import { topVia } from './transaction/keys.ts';
import { DEFAULT_TRANSACTION_LIMITS, TransactionLayer } from './transaction/layer.ts';
import type { TransactionLimits } from './transaction/layer.ts';
import { InviteServerTransaction } from './transaction/server.ts';
import { DEFAULT_CONNECTION_LIMITS, SipTransports } from './endpoint-transport.ts';
import type { ConnectionLimits, Source } from './endpoint-transport.ts';
import { escapeUser, formatHost } from './uri.ts';

export interface EndpointLimits extends TransactionLimits {
  maxDialogs: number;
  /** An INVITE the application neither answers nor rejects gets 480 after this long (RFC 3261's Timer C is 3 min). */
  unansweredInviteMs: number;
  /** How long close() waits for un-REGISTERs before closing regardless. */
  closeGraceMs: number;
  connections: ConnectionLimits;
}

export interface SipEndpointOptions {
  /** Bind address (PARLEY_SIP_HOST). */
  host: string;
  /** UDP and TCP port (PARLEY_SIP_PORT); 0 picks a free one. */
  port: number;
  /** The address written into Via and Contact; defaults to `host`. Set it behind NAT. */
  advertisedHost?: string;
  clock?: Clock;
  log?: SipLogger;
  /** RFC 3261 T1, T2, T4 in ms; tests shorten them. */
  timers?: Partial<SipTimerValues>;
  limits?: Partial<Omit<EndpointLimits, 'connections'>> & { connections?: Partial<ConnectionLimits> };
  rateLimit?: Partial<RateLimitOptions>;
  /** DNS resolver and the egress policy every outgoing SIP destination must pass. */
  policy?: TargetPolicy;
  /** Trust for outgoing TLS (private CAs, tests); certificates are verified by default. */
  tls?: { rejectUnauthorized?: boolean; ca?: string | Buffer | Array<string | Buffer> };
}

export type InviteHandler = (call: IncomingCall) => void;

const tagOf = (value: string | undefined): string => headerParams(value ?? '').get('tag') ?? '';

export class SipEndpoint implements SipCore {
  readonly log: SipLogger;
  readonly clock: Clock;
  readonly timers: SipTimerValues;
  readonly transactions: TransactionLayer;
  readonly policy: TargetPolicy;
  readonly advertised: { host: string; port: number };
  readonly unansweredInviteMs: number;
  readonly counters: SipCounters = { byeFailures: 0 };
  readonly #dialogs = new Map<string, DialogHandle>();
  readonly #limits: EndpointLimits;
  #transports!: SipTransports;
  #onInvite: InviteHandler | null = null;
  readonly #registrations = new Set<Registration>();
  #closing = false;

  private constructor(options: SipEndpointOptions) {
    this.log = options.log ?? silentLog;
    this.clock = options.clock ?? systemClock;
    this.timers = { ...DEFAULT_TIMERS, ...options.timers };
    this.policy = options.policy ?? {};
    this.#limits = { ...DEFAULT_TRANSACTION_LIMITS, maxDialogs: 2000, unansweredInviteMs: 180_000, closeGraceMs: 2000, ...options.limits, connections: { ...DEFAULT_CONNECTION_LIMITS, ...options.limits?.connections } };
    this.unansweredInviteMs = this.#limits.unansweredInviteMs;
    this.transactions = new TransactionLayer({ send: (msg, hop) => this.send(msg, hop) }, this.timers, this.#limits);
    this.advertised = { host: options.advertisedHost ?? options.host, port: 0 };
  }

  static async start(options: SipEndpointOptions): Promise<SipEndpoint> {
    const endpoint = new SipEndpoint(options);
    endpoint.#transports = await SipTransports.open({
      host: options.host,
      port: options.port,
      limits: endpoint.#limits.connections,
      rateLimit: new SourceRateLimiter({ ...DEFAULT_RATE_LIMIT, ...options.rateLimit }),
      log: endpoint.log,
      ...(options.tls ? { tls: options.tls } : {}),
      onMessage: (msg, source) => endpoint.#receive(msg, source),
      onMalformed: (req, status, reason, source) => endpoint.#refuseMalformed(req, status, reason, source),
    });
    endpoint.advertised.port = endpoint.#transports.port;
    return endpoint;
  }

  get port(): number {
    return this.advertised.port;
  }

  get dialogCount(): number {
    return this.#dialogs.size;
  }

  /** What /metrics shows of the endpoint: each a count since start. */
  stats(): { byeFailures: number; refusedRequests: number; droppedMessages: number } {
    return { byeFailures: this.counters.byeFailures, refusedRequests: this.transactions.refused, droppedMessages: this.#transports.rateLimit.dropped };
  }

  /** Who answers calls that arrive (none: 480 Temporarily Unavailable). */
  onInvite(handler: InviteHandler | null): void {
    this.#onInvite = handler;
  }

  placeCall(options: PlaceCallOptions): Promise<OutboundResult> {
    return placeCall(this, options);
  }

  /** Starts a registration that keeps itself refreshed until stop() (or close()). */
  register(options: RegistrationOptions): Registration {
    const registration: Registration = new Registration(this, options, () => this.#registrations.delete(registration));
    this.#registrations.add(registration);
    return registration;
  }

  send(msg: SipMessage, hop: Hop): Promise<void> {
    return this.#transports.send(msg, hop);
  }

  stamp(req: SipRequest, hop: Hop): SipRequest {
    return addVia(req, hop.transport === 'tls' ? 'TLS' : hop.transport, this.advertised.host, this.advertised.port);
  }

  contact(user: string, transport: SipTransport): string {
    const t = transport === 'udp' ? '' : `;transport=${transport}`;
    return `<sip:${escapeUser(user)}@${formatHost(this.advertised.host)}:${this.advertised.port}${t}>`;
  }

  registerDialog(dialog: DialogHandle): boolean {
    if (this.#dialogs.size >= this.#limits.maxDialogs) return false;
    this.#dialogs.set(dialog.key, dialog);
    return true;
  }

  unregisterDialog(key: string): void {
    this.#dialogs.delete(key);
  }

  /**
   * Un-registers (waiting at most closeGraceMs, so a dead registrar cannot hold up shutdown), ends
   * every dialog without signalling, fails pending transactions and closes the sockets.
   */
  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.#limits.closeGraceMs)));
    await Promise.race([Promise.all([...this.#registrations].map((r) => r.stop())), grace]);
    clearTimeout(timer);
    for (const dialog of [...this.#dialogs.values()]) dialog.abandon('SIP endpoint closed');
    this.transactions.closeAll();
    await this.#transports.close();
  }

  #receive(msg: SipMessage, source: Source): void {
    try {
      if (msg.kind === 'response') this.#onResponse(msg);
      else this.#onRequest(msg, source);
    } catch (err) {
      // Nothing a peer sends may take the endpoint down; log and drop.
      this.log.warn({ err: (err as Error).message, from: source.address }, 'sip: failed to handle message');
    }
  }

  #onResponse(res: SipResponse): void {
    if (this.transactions.receiveResponse(res)) return;
    // A 2xx to an INVITE whose transaction has ended: our ACK was lost, the dialog repeats it.
    if (res.status >= 200 && res.status < 300 && /INVITE$/i.test(res.headers.get('CSeq') ?? '')) {
      const key = dialogKey(res.headers.get('Call-ID') ?? '', tagOf(res.headers.get('From')), tagOf(res.headers.get('To')));
      this.#dialogs.get(key)?.handle2xxRetransmission(res);
    }
  }

  #onRequest(req: SipRequest, source: Source): void {
    const via = topVia(req);
    if (!via) return; // cannot even answer
    const hop = responseHop(req, source, via.params.has('rport') ? null : via.port);
    stampReceived(req, source);
    const dialog = this.#dialogs.get(dialogKey(req.headers.get('Call-ID') ?? '', tagOf(req.headers.get('To')), tagOf(req.headers.get('From'))));
    if (req.method === 'ACK') {
      const tx = this.transactions.findServer(req);
      if (tx instanceof InviteServerTransaction && tx.receiveAck()) return;
      dialog?.handleAck(req);
      return;
    }
    const existing = this.transactions.findServer(req);
    if (existing) return existing.receiveRetransmission();
    const refusal = inspectRequest(req);
    const tx = this.transactions.createServer(req, hop);
    if (!tx) return this.#answerStateless(req, refusal ?? { status: 503, headers: [['Retry-After', '5']] }, hop);
    const answer = (status: number, options: Omit<Refusal, 'status'> = {}): void => tx.respond(makeResponse(req, status, { toTag: tx.toTag, ...options }));
    if (refusal) return answer(refusal.status, refusal);
    if (req.method === 'CANCEL') return this.#onCancel(req, tx);
    // RFC 3261 §8.2.2.3: we implement no extension a request could require (100rel, timer...).
    const required = req.headers.getAll('Require').flatMap(splitHeaderList);
    if (required.length > 0) return answer(420, { headers: [['Unsupported', required.join(', ')]] });
    if (req.method === 'INVITE') tx.respond(makeResponse(req, 100));
    if (tagOf(req.headers.get('To'))) {
      if (dialog) dialog.handleRequest(req, tx);
      else answer(481);
      return;
    }
    if (req.method === 'INVITE' && tx instanceof InviteServerTransaction) {
      const handler = this.#onInvite;
      if (!handler) return answer(480);
      handler(new IncomingCall(this, req, tx, source));
      return;
    }
    if (req.method === 'OPTIONS') return answer(200, { headers: [['Allow', ALLOW], ['Accept', 'application/sdp']] });
    const noDialog = ['BYE', 'INFO', 'NOTIFY', 'UPDATE', 'PRACK'].includes(req.method);
    answer(noDialog ? 481 : 405, noDialog ? {} : { headers: [['Allow', ALLOW]] });
  }

  /** A response without a transaction: no room for one, or a request whose head was all we could read. */
  #answerStateless(req: SipRequest, refusal: Refusal, hop: Hop): void {
    const res = makeResponse(req, refusal.status, { ...(refusal.reason ? { reason: refusal.reason } : {}), ...(refusal.headers ? { headers: refusal.headers } : {}) });
    this.send(res, hop).catch((err: unknown) => this.log.debug({ err: (err as Error).message, to: hop.address }, 'sip: could not send a stateless answer'));
  }

  /** RFC 4475 §3.1.2: a request framed wrong (a Content-Length that lies, LWS in its Request-URI, SIP/7.0) is answered, once. */
  #refuseMalformed(req: SipRequest, status: number, reason: string, source: Source): void {
    const via = topVia(req);
    if (!via || req.method === 'ACK') return;
    const hop = responseHop(req, source, via.params.has('rport') ? null : via.port);
    stampReceived(req, source);
    this.#answerStateless(req, { status, reason: reason.length > 60 ? 'Bad Request' : reason }, hop);
  }

  #onCancel(req: SipRequest, tx: { respond(res: SipResponse): void; readonly toTag: string }): void {
    const invite = this.transactions.findServer(req, 'INVITE');
    if (!(invite instanceof InviteServerTransaction)) return tx.respond(makeResponse(req, 481, { toTag: tx.toTag }));
    tx.respond(makeResponse(req, 200, { toTag: invite.toTag }));
    if (!invite.answered) invite.tu.onCancel?.();
  }
}

/** RFC 3261 §18.2.2 with RFC 3581: answer where the request came from. */
function responseHop(req: SipRequest, source: Source, viaPort: number | null): Hop {
  if (source.transport !== 'udp') return { transport: source.transport, address: source.address, port: source.port };
  return { transport: 'udp', address: source.address, port: viaPort ?? source.port };
}

/** Adds received= and fills rport= on the top Via, so the responses carry them (RFC 3581). */
function stampReceived(req: SipRequest, source: Source): void {
  const values = req.headers.getAll('Via');
  const first = values[0];
  if (first === undefined) return;
  const [top = '', ...rest] = first.split(/,(?=\s*SIP\s*\/)/i);
  let stamped = /;\s*received=/i.test(top) ? top : `${top};received=${source.address}`;
  stamped = stamped.replace(/;\s*rport(?=;|$|\s)/i, `;rport=${source.port}`);
  req.headers.delete('Via');
  req.headers.append('Via', [stamped, ...rest].join(','));
  for (const v of values.slice(1)) req.headers.append('Via', v);
}
