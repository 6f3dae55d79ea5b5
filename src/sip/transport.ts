// One "flow" (a UDP socket, TCP connection or TLS session) to one resolved
// target, carrying non-INVITE client transactions (RFC 3261 §17.1.2). UDP
// retransmits per Timer E; TCP/TLS rely on the transport's own reliability.
import dgram from 'node:dgram';
import net from 'node:net';
import tls from 'node:tls';
import { SipStreamFramer, headerParams, parseCSeq, parseMessage, serializeMessage, splitHeaderList } from './message.ts';
import type { SipMessage, SipRequest, SipResponse } from './message.ts';
import type { ResolvedTarget, SipTransport } from './resolve.ts';

/** No final response before the caller's deadline (or Timer F). */
export class SipTimeoutError extends Error {
  override name = 'SipTimeoutError';
  constructor() {
    super('timeout');
  }
}

/** The flow could not be set up or broke: refused, reset, TLS failure, garbage. */
export class SipTransportError extends Error {
  override name = 'SipTransportError';
  readonly code: string | undefined;
  constructor(message: string, code?: string) {
    super(message);
    this.code = code;
  }
}

export interface FlowOptions {
  transport: SipTransport;
  target: ResolvedTarget;
  /** Whole-operation deadline; when it fires every pending step rejects with SipTimeoutError. */
  signal: AbortSignal;
  /** Host name for TLS SNI and certificate verification; IP literals are verified as IPs. */
  servername?: string;
  tls?: { rejectUnauthorized?: boolean; ca?: string | Buffer | Array<string | Buffer> };
  /** RFC 3261 T1/T2; only tests change them. */
  timers?: { t1?: number; t2?: number };
}

export interface SipFlow {
  readonly transport: SipTransport;
  readonly local: { address: string; port: number };
  readonly remote: ResolvedTarget;
  /**
   * Runs one non-INVITE client transaction and resolves with its final response.
   * `signal` replaces the flow's deadline for this transaction (e.g. a cleanup step).
   */
  request(req: SipRequest, opts?: RequestOptions): Promise<SipResponse>;
  close(): void;
}

export interface RequestOptions {
  signal?: AbortSignal;
  onProvisional?: (res: SipResponse) => void;
}

interface Io {
  reliable: boolean;
  send(wire: Buffer): Promise<void>;
  close(): void;
}

interface Pending {
  onResponse(res: SipResponse): void;
  fail(err: Error): void;
}

function transactionKey(msg: SipMessage): string | null {
  const via = msg.headers.get('Via');
  const cseq = msg.headers.get('CSeq');
  if (!via || !cseq) return null;
  const top = splitHeaderList(via)[0] ?? '';
  const branch = headerParams(top).get('branch');
  try {
    return branch ? `${branch}|${parseCSeq(cseq).method}` : null;
  } catch {
    return null;
  }
}

type Settle<T> = { resolve: (v: T) => void; reject: (e: Error) => void };

/** Runs `work` until it settles or `signal` aborts; cleanups run exactly on either. */
function abortable<T>(signal: AbortSignal, work: (settle: Settle<T>, onCleanup: (fn: () => void) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const cleanups: Array<() => void> = [];
    const done = (): void => {
      signal.removeEventListener('abort', abort);
      for (const fn of cleanups) fn();
    };
    const abort = (): void => {
      done();
      reject(new SipTimeoutError());
    };
    if (signal.aborted) return reject(new SipTimeoutError());
    signal.addEventListener('abort', abort, { once: true });
    work({ resolve: (v) => (done(), resolve(v)), reject: (e) => (done(), reject(e)) }, (fn) => cleanups.push(fn));
  });
}

class Flow implements SipFlow {
  readonly #pending = new Map<string, Pending>();
  #closedWith: Error | null = null;

  constructor(
    readonly transport: SipTransport,
    readonly local: { address: string; port: number },
    readonly remote: ResolvedTarget,
    private readonly io: Io,
    private readonly signal: AbortSignal,
    private readonly t1: number,
    private readonly t2: number,
  ) {}

  deliver(msg: SipMessage): void {
    // Requests from the server (OPTIONS pings, NOTIFY) are not ours to answer here.
    if (msg.kind !== 'response') return;
    const key = transactionKey(msg);
    if (key) this.#pending.get(key)?.onResponse(msg);
  }

  failAll(err: Error): void {
    this.#closedWith ??= err;
    for (const p of [...this.#pending.values()]) p.fail(err);
  }

  request(req: SipRequest, opts: RequestOptions = {}): Promise<SipResponse> {
    const key = transactionKey(req);
    if (!key) return Promise.reject(new TypeError('request needs a Via branch and a CSeq'));
    const wire = serializeMessage(req);
    return abortable<SipResponse>(opts.signal ?? this.signal, ({ resolve, reject }, onCleanup) => {
      if (this.#closedWith) return reject(this.#closedWith);
      if (this.#pending.has(key)) return reject(new TypeError(`transaction ${key} already running`));
      let interval = this.t1;
      let timerE: NodeJS.Timeout | undefined;
      // Timer F bounds the transaction even if the caller's deadline is generous.
      const timerF = setTimeout(() => reject(new SipTimeoutError()), 64 * this.t1);
      let settled = false;
      onCleanup(() => {
        settled = true;
        clearTimeout(timerE);
        clearTimeout(timerF);
        this.#pending.delete(key);
      });
      const retransmit = (): void => {
        // The answer can beat the first send's callback; then nothing is left to do.
        if (settled) return;
        clearTimeout(timerE); // never two retransmission chains
        timerE = setTimeout(() => {
          // Errors here (e.g. ICMP port unreachable) may be transient: keep trying until the deadline.
          this.io.send(wire).catch(() => undefined);
          interval = Math.min(interval * 2, this.t2);
          retransmit();
        }, interval);
      };
      this.#pending.set(key, {
        onResponse: (res) => {
          if (res.status >= 200) return resolve(res);
          opts.onProvisional?.(res);
          // Proceeding state: Timer E continues, but at T2 (RFC 3261 §17.1.2.2).
          if (!this.io.reliable) {
            interval = this.t2;
            retransmit();
          }
        },
        fail: reject,
      });
      this.io.send(wire).then(
        () => {
          if (!this.io.reliable) retransmit();
        },
        (err: unknown) => reject(toTransportError(err, this.remote)),
      );
    });
  }

  close(): void {
    this.failAll(new SipTransportError('flow closed'));
    this.io.close();
  }
}

function toTransportError(err: unknown, remote: ResolvedTarget): SipTransportError {
  if (err instanceof SipTransportError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  const where = remote.family === 6 ? `[${remote.address}]:${remote.port}` : `${remote.address}:${remote.port}`;
  if (code === 'ECONNREFUSED') return new SipTransportError(`connection refused by ${where}`, code);
  const message = err instanceof Error ? err.message : String(err);
  return new SipTransportError(`${where}: ${message}`, typeof code === 'string' ? code : undefined);
}

async function openUdp(opts: FlowOptions, t1: number, t2: number): Promise<Flow> {
  const sock = dgram.createSocket(opts.target.family === 6 ? 'udp6' : 'udp4');
  let flow: Flow | null = null;
  // A connected socket reports ICMP errors as 'error' events. Port unreachable (ECONNREFUSED)
  // means nothing listens there: every transaction fails at once, as on TCP, instead of
  // retransmitting into the void until the deadline. Other ICMP errors may pass; they are ignored.
  sock.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'ECONNREFUSED') return;
    const { message } = toTransportError(err, opts.target);
    flow?.failAll(new SipTransportError(`${message} (ICMP port unreachable)`, err.code));
  });
  await abortable<void>(opts.signal, ({ resolve, reject }, onCleanup) => {
    const fail = (err: Error): void => reject(toTransportError(err, opts.target));
    sock.once('error', fail);
    onCleanup(() => sock.off('error', fail));
    // connect() on UDP sends nothing; it fixes the peer so the kernel picks our
    // source address (needed for Via/Contact) and drops datagrams from anyone else.
    sock.bind(0, () => sock.connect(opts.target.port, opts.target.address, () => resolve()));
  }).catch((err: unknown) => {
    sock.close();
    throw err;
  });
  const addr = sock.address();
  sock.on('message', (buf) => {
    try {
      flow?.deliver(parseMessage(buf));
    } catch {
      // Unparseable datagrams are dropped, as RFC 3261 §18.1.2 asks of a client.
    }
  });
  const io: Io = {
    reliable: false,
    send: (wire) => new Promise<void>((resolve, reject) => sock.send(wire, (err) => (err ? reject(err) : resolve()))),
    close: () => {
      try {
        sock.close();
      } catch {
        // already closed
      }
    },
  };
  flow = new Flow('udp', { address: addr.address, port: addr.port }, opts.target, io, opts.signal, t1, t2);
  return flow;
}

async function openStream(opts: FlowOptions, t1: number, t2: number): Promise<Flow> {
  const { target } = opts;
  const socket: net.Socket =
    opts.transport === 'tls'
      ? tls.connect({
          host: target.address,
          port: target.port,
          // SNI must be a name (RFC 6066); for an IP literal the certificate is checked against the IP.
          ...(opts.servername && net.isIP(opts.servername.replace(/^\[|\]$/g, '')) === 0 ? { servername: opts.servername } : {}),
          rejectUnauthorized: opts.tls?.rejectUnauthorized ?? true,
          ...(opts.tls?.ca ? { ca: opts.tls.ca } : {}),
        })
      : net.connect({ host: target.address, port: target.port, family: target.family });
  const connectEvent = opts.transport === 'tls' ? 'secureConnect' : 'connect';
  await abortable<void>(opts.signal, ({ resolve, reject }, onCleanup) => {
    const fail = (err: Error): void => reject(toTransportError(err, target));
    socket.once('error', fail);
    socket.once(connectEvent, () => resolve());
    onCleanup(() => socket.off('error', fail));
  }).catch((err: unknown) => {
    socket.destroy();
    throw err;
  });

  const framer = new SipStreamFramer();
  const io: Io = {
    reliable: true,
    send: (wire) => new Promise<void>((resolve, reject) => socket.write(wire, (err) => (err ? reject(err) : resolve()))),
    close: () => socket.destroy(),
  };
  const flow = new Flow(opts.transport, { address: socket.localAddress ?? '', port: socket.localPort ?? 0 }, target, io, opts.signal, t1, t2);
  socket.on('data', (chunk: Buffer) => {
    let messages: SipMessage[];
    try {
      messages = framer.push(chunk);
    } catch (err) {
      flow.failAll(new SipTransportError(`unparseable data from server: ${err instanceof Error ? err.message : String(err)}`));
      socket.destroy();
      return;
    }
    for (const m of messages) flow.deliver(m);
  });
  socket.on('error', (err) => flow.failAll(toTransportError(err, target)));
  socket.on('close', () => flow.failAll(new SipTransportError('connection closed by server')));
  return flow;
}

/** Opens a flow to one target; rejects with SipTransportError or SipTimeoutError. */
export function openFlow(opts: FlowOptions): Promise<SipFlow> {
  const t1 = opts.timers?.t1 ?? 500;
  const t2 = opts.timers?.t2 ?? 4000;
  return opts.transport === 'udp' ? openUdp(opts, t1, t2) : openStream(opts, t1, t2);
}
