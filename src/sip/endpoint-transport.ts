// The endpoint's transport layer (RFC 3261 §18): one UDP socket and one TCP listener on
// the same host and port, plus outgoing TCP/TLS connections kept for reuse. Everything
// that arrives passes the per-source rate limit and the message size cap before parsing.
import dgram from 'node:dgram';
import net from 'node:net';
import tls from 'node:tls';
import { SipStreamFramer, parseMessage, serializeMessage } from './message.ts';
import type { SipMessage } from './message.ts';
import type { SourceRateLimiter } from './rate-limit.ts';
import type { SipTransport } from './resolve.ts';
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

export interface ConnectionLimits {
  /** Open TCP/TLS connections, both directions together. */
  maxConnections: number;
  /** Incoming connections from one address. */
  maxPerAddress: number;
  /** A connection that carries nothing this long is closed. */
  idleMs: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = { maxConnections: 1024, maxPerAddress: 32, idleMs: 300_000 };

export interface SipTransportsOptions {
  host: string;
  /** 0 picks a free port (the same one for UDP and TCP). */
  port: number;
  limits: ConnectionLimits;
  rateLimit: SourceRateLimiter;
  tls?: { rejectUnauthorized?: boolean; ca?: string | Buffer | Array<string | Buffer> };
  log: SipLogger;
  onMessage(msg: SipMessage, source: Source): void;
}

interface Connection {
  socket: net.Socket;
  ready: Promise<void>;
  inbound: boolean;
}

const keyOf = (transport: SipTransport, address: string, port: number): string => `${transport}|${address}|${port}`;

export class SipTransports implements MessageSender {
  readonly #conns = new Map<string, Connection>();
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
      await new Promise<void>((resolve, reject) => udp.once('error', reject).bind(options.port, options.host, () => resolve()));
      const port = udp.address().port;
      const tcp = net.createServer();
      try {
        await new Promise<void>((resolve, reject) => tcp.once('error', reject).listen(port, options.host, () => resolve()));
      } catch (err) {
        udp.close();
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

  #listen(): void {
    const { log, rateLimit } = this.options;
    this.udp.on('error', (err) => log.warn({ err: err.message }, 'sip: udp socket error'));
    this.udp.on('message', (buf, rinfo) => {
      if (!rateLimit.allow(rinfo.address)) return;
      let msg: SipMessage;
      try {
        msg = parseMessage(buf);
      } catch (err) {
        log.debug({ from: rinfo.address, err: (err as Error).message }, 'sip: dropped unparseable datagram');
        return;
      }
      this.options.onMessage(msg, { transport: 'udp', address: rinfo.address, port: rinfo.port });
    });
    this.tcp.on('connection', (socket) => this.#accept(socket));
  }

  #accept(socket: net.Socket): void {
    const address = socket.remoteAddress ?? '';
    const port = socket.remotePort ?? 0;
    const fromHere = [...this.#conns.values()].filter((c) => c.inbound && c.socket.remoteAddress === address).length;
    if (this.#closed || this.#conns.size >= this.options.limits.maxConnections || fromHere >= this.options.limits.maxPerAddress || !this.options.rateLimit.allow(address)) {
      socket.destroy();
      return;
    }
    const key = keyOf('tcp', address, port);
    this.#adopt(key, socket, { transport: 'tcp', address, port }, true);
    this.#conns.set(key, { socket, ready: Promise.resolve(), inbound: true });
  }

  /** Reads messages off a stream socket and forgets it when it closes. */
  #adopt(key: string, socket: net.Socket, source: Source, inbound: boolean): void {
    const framer = new SipStreamFramer();
    socket.setTimeout(this.options.limits.idleMs, () => socket.destroy());
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (this.#conns.get(key)?.socket === socket) this.#conns.delete(key);
    });
    socket.on('data', (chunk: Buffer) => {
      let messages: SipMessage[];
      try {
        messages = framer.push(chunk);
      } catch (err) {
        this.options.log.debug({ from: source.address, err: (err as Error).message, inbound }, 'sip: closing unframeable stream');
        socket.destroy();
        return;
      }
      for (const msg of messages) {
        if (inbound && !this.options.rateLimit.allow(source.address)) continue;
        this.options.onMessage(msg, source);
      }
    });
  }

  #connect(hop: Hop): Connection {
    const key = keyOf(hop.transport, hop.address, hop.port);
    const existing = this.#conns.get(key);
    if (existing && !existing.socket.destroyed) return existing;
    if (this.#conns.size >= this.options.limits.maxConnections) throw new Error('too many SIP connections');
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
    const conn: Connection = { socket, ready, inbound: false };
    this.#conns.set(key, conn);
    this.#adopt(key, socket, { transport: hop.transport, address: hop.address, port: hop.port }, false);
    return conn;
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
    await Promise.all([
      new Promise<void>((resolve) => this.udp.close(() => resolve())),
      new Promise<void>((resolve) => this.tcp.close(() => resolve())),
    ]);
  }
}
