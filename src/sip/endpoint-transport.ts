// The endpoint's transport layer (RFC 3261 §18): one UDP socket and one TCP listener on
// the same host and port, plus outgoing TCP/TLS connections kept for reuse. Everything
// that arrives passes the per-source rate limit (messages and bytes) and the message size
// cap before parsing; incoming connections are capped per address and in all, apart from
// our outgoing ones, and a full table makes room by closing a connection that has shown
// little (one that never completed a message first).
import dgram from 'node:dgram';
import net from 'node:net';
import tls from 'node:tls';
import { SipParseError, parseMessage, serializeMessage } from './message.ts';
import type { SipMessage, SipRequest } from './message.ts';
import type { SourceRateLimiter } from './rate-limit.ts';
import type { SipTransport } from './resolve.ts';
import { StreamReader } from './stream-reader.ts';
import type { StreamDeadlines } from './stream-reader.ts';
import type { Hop, MessageSender } from './transaction/common.ts';
import type { SipLogger } from './log.ts';

/**
 * The SIP UDP socket's kernel receive buffer. Linux's default (208 KiB, some 90 datagrams as the
 * kernel counts them) overflows when a burst of calls is answered while the event loop is busy
 * starting their pipelines: a 200 OK dropped there delays the answer until the far end retransmits
 * it (0.5 s, then 1 s, 2 s…), and a far end that never does leaves the call unanswered. The kernel
 * caps this at net.core.rmem_max.
 */
const UDP_RECEIVE_BUFFER = 4 * 1024 * 1024;

export interface Source {
  transport: SipTransport;
  address: string;
  port: number;
}

export interface ConnectionLimits extends StreamDeadlines {
  /** Incoming TCP connections in all. */
  maxInbound: number;
  /** Outgoing TCP/TLS connections in all, counted apart: incoming ones never take their room. */
  maxOutbound: number;
  /** Incoming connections from one address. */
  maxPerAddress: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = { maxInbound: 1024, maxOutbound: 256, maxPerAddress: 32, idleMs: 300_000, headMs: 10_000, bodyMs: 10_000 };

export interface SipTransportsOptions {
  host: string;
  /** 0 picks a free port (the same one for UDP and TCP). */
  port: number;
  limits: ConnectionLimits;
  rateLimit: SourceRateLimiter;
  tls?: { rejectUnauthorized?: boolean; ca?: string | Buffer | Array<string | Buffer> };
  log: SipLogger;
  onMessage(msg: SipMessage, source: Source): void;
  /** A datagram whose head could be read although it is invalid: answer it `status`. */
  onMalformed(req: SipRequest, status: number, reason: string, source: Source): void;
}

interface Connection {
  key: string;
  socket: net.Socket;
  ready: Promise<void>;
  inbound: boolean;
  address: string;
  reader: StreamReader;
}

const keyOf = (transport: SipTransport, address: string, port: number): string => `${transport}|${address}|${port}`;

export class SipTransports implements MessageSender {
  readonly #conns = new Map<string, Connection>();
  /** Incoming connections by remote address. */
  readonly #inbound = new Map<string, Set<Connection>>();
  #inboundCount = 0;
  #closed = false;

  private constructor(
    private readonly options: SipTransportsOptions,
    private readonly udp: dgram.Socket,
    private readonly tcp: net.Server,
    readonly port: number,
  ) {}

  static async open(options: SipTransportsOptions): Promise<SipTransports> {
    // With port 0 the kernel picks the UDP port; TCP must then get the same number, which
    // another process may hold: try a few times.
    for (let attempt = 0; ; attempt++) {
      const udp = dgram.createSocket({ type: net.isIP(options.host) === 6 ? 'udp6' : 'udp4', recvBufferSize: UDP_RECEIVE_BUFFER });
      try {
        await new Promise<void>((resolve, reject) => udp.once('error', reject).bind(options.port, options.host, () => resolve()));
      } catch (err) {
        // A socket whose bind failed still holds its handle: close it, or it keeps the process alive.
        closeQuietly(udp);
        throw err;
      }
      const port = udp.address().port;
      const tcp = net.createServer();
      try {
        await new Promise<void>((resolve, reject) => tcp.once('error', reject).listen(port, options.host, () => resolve()));
      } catch (err) {
        closeQuietly(udp);
        if (options.port !== 0 || attempt >= 5) throw err;
        continue;
      }
      const transports = new SipTransports(options, udp, tcp, port);
      transports.#listen();
      return transports;
    }
  }

  get host(): string {
    return this.options.host;
  }

  get connectionCount(): number {
    return this.#conns.size;
  }

  get rateLimit(): SourceRateLimiter {
    return this.options.rateLimit;
  }

  #listen(): void {
    const { log, rateLimit } = this.options;
    this.udp.on('error', (err) => log.warn({ err: err.message }, 'sip: udp socket error'));
    this.udp.on('message', (buf, rinfo) => {
      if (!rateLimit.allow(rinfo.address, buf.length)) return;
      const source: Source = { transport: 'udp', address: rinfo.address, port: rinfo.port };
      let msg: SipMessage;
      try {
        msg = parseMessage(buf);
      } catch (err) {
        const answer = err instanceof SipParseError ? err.answer : undefined;
        if (answer) this.options.onMalformed(answer.request, answer.status, (err as Error).message, source);
        else log.debug({ from: rinfo.address, err: (err as Error).message }, 'sip: dropped unparseable datagram');
        return;
      }
      this.options.onMessage(msg, source);
    });
    this.tcp.on('connection', (socket) => this.#accept(socket));
  }

  #accept(socket: net.Socket): void {
    const address = socket.remoteAddress ?? '';
    const port = socket.remotePort ?? 0;
    const { maxInbound, maxPerAddress } = this.options.limits;
    const fromHere = this.#inbound.get(address)?.size ?? 0;
    if (this.#closed || fromHere >= maxPerAddress || !this.options.rateLimit.allow(address)) {
      socket.destroy();
      return;
    }
    if (this.#inboundCount >= maxInbound && !this.#evictInbound()) {
      socket.destroy();
      return;
    }
    this.#adopt(keyOf('tcp', address, port), socket, { transport: 'tcp', address, port }, Promise.resolve(), true);
  }

  /**
   * Room for a newcomer in a full table of incoming connections: one that never completed a
   * message goes (the oldest of the first address that has one), else the quietest connection of
   * the address that holds the most (a trunk holds one or two).
   */
  #evictInbound(): boolean {
    for (const set of this.#inbound.values()) {
      for (const c of set) if (!c.reader.proven) return this.#drop(c);
    }
    let busiest: Set<Connection> | undefined;
    for (const set of this.#inbound.values()) if (!busiest || set.size > busiest.size) busiest = set;
    let victim: Connection | undefined;
    for (const c of busiest ?? []) if (!victim || c.reader.lastMessageAt < victim.reader.lastMessageAt) victim = c;
    return victim ? this.#drop(victim) : false;
  }

  /** Closes a connection and forgets it at once (its close event comes later). */
  #drop(conn: Connection): true {
    this.#forget(conn);
    conn.socket.destroy();
    return true;
  }

  #forget(conn: Connection): void {
    if (this.#conns.get(conn.key) === conn) this.#conns.delete(conn.key);
    const set = this.#inbound.get(conn.address);
    if (conn.inbound && set?.delete(conn)) {
      this.#inboundCount--;
      if (set.size === 0) this.#inbound.delete(conn.address);
    }
  }

  /** Reads messages off a stream socket and forgets it when it closes. */
  #adopt(key: string, socket: net.Socket, source: Source, ready: Promise<void>, inbound: boolean): Connection {
    const { log, rateLimit, limits } = this.options;
    const reader = new StreamReader(socket, limits, {
      messages: (messages, bytes) => {
        for (const msg of messages) {
          if (inbound && !rateLimit.allow(source.address, bytes)) continue;
          bytes = 0;
          this.options.onMessage(msg, source);
        }
      },
      garbage: (err) => log.debug({ from: source.address, err: err.message, inbound }, 'sip: closing unframeable stream'),
      late: (what) => log.debug({ from: source.address, inbound }, `sip: closing a connection whose message ${what} did not arrive in time`),
    }, inbound);
    const conn: Connection = { key, socket, ready, inbound, address: source.address, reader };
    socket.on('error', () => undefined);
    socket.on('close', () => this.#forget(conn));
    this.#conns.set(key, conn);
    if (inbound) {
      const set = this.#inbound.get(source.address) ?? new Set<Connection>();
      set.add(conn);
      this.#inbound.set(source.address, set);
      this.#inboundCount++;
    }
    return conn;
  }

  #connect(hop: Hop): Connection {
    const key = keyOf(hop.transport, hop.address, hop.port);
    const existing = this.#conns.get(key);
    if (existing && !existing.socket.destroyed) return existing;
    if (this.#conns.size - this.#inboundCount >= this.options.limits.maxOutbound) throw new Error('too many outgoing SIP connections');
    const socket: net.Socket = hop.transport === 'tls'
      ? tls.connect({
          host: hop.address,
          port: hop.port,
          ...(hop.servername && net.isIP(hop.servername) === 0 ? { servername: hop.servername } : {}),
          rejectUnauthorized: this.options.tls?.rejectUnauthorized ?? true,
          ...(this.options.tls?.ca ? { ca: this.options.tls.ca } : {}),
        })
      : net.connect({ host: hop.address, port: hop.port });
    const ready = new Promise<void>((resolve, reject) => {
      socket.once(hop.transport === 'tls' ? 'secureConnect' : 'connect', () => resolve());
      socket.once('error', (err: NodeJS.ErrnoException) => {
        const where = `${hop.address}:${hop.port}`;
        reject(new Error(err.code === 'ECONNREFUSED' ? `connection refused by ${where}` : `${where}: ${err.message}`));
      });
    });
    ready.catch(() => undefined);
    return this.#adopt(key, socket, { transport: hop.transport, address: hop.address, port: hop.port }, ready, false);
  }

  async send(msg: SipMessage, hop: Hop): Promise<void> {
    if (this.#closed) throw new Error('SIP endpoint closed');
    const wire = serializeMessage(msg);
    if (hop.transport === 'udp') {
      await new Promise<void>((resolve, reject) => this.udp.send(wire, hop.port, hop.address, (err) => (err ? reject(err) : resolve())));
      return;
    }
    const conn = this.#connect(hop);
    await conn.ready;
    await new Promise<void>((resolve, reject) => conn.socket.write(wire, (err) => (err ? reject(err) : resolve())));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const c of this.#conns.values()) c.socket.destroy();
    this.#conns.clear();
    this.#inbound.clear();
    this.#inboundCount = 0;
    await Promise.all([
      new Promise<void>((resolve) => this.udp.close(() => resolve())),
      new Promise<void>((resolve) => this.tcp.close(() => resolve())),
    ]);
  }
}

/** Closes a UDP socket that may already be closed. */
function closeQuietly(udp: dgram.Socket): void {
  try {
    udp.close();
  } catch {
    // already closed
  }
}
