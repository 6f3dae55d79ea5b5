/** What the attack tests share: raw sockets, memory and descriptor counts, waiting for a condition. */
import { readdirSync } from 'node:fs';
import { get } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { until } from '../helpers/until.ts';

/** Resident memory of this process (the service under test runs in it), in MiB. */
export const rssMiB = (): number => process.memoryUsage().rss / 1024 / 1024;

/** Open file descriptors of this process. */
export const openDescriptors = (): number => readdirSync('/proc/self/fd').length;

/** A full garbage collection, so that memory measured next is memory really held. */
export function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** Polls `check` until it holds; fails after a deadline that only a broken run reaches. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  await until(what, check, (ok) => ok, timeoutMs, 20);
}

/** A raw TCP client that keeps everything it receives and knows when the server closed. */
export interface RawClient {
  socket: Socket;
  /** Everything received so far, as latin1 text. */
  received(): string;
  readonly closed: boolean;
  /** Resolves once the connection is closed (by either side). */
  whenClosed: Promise<void>;
  /** Resolves with the first chunk the server sends. */
  firstChunk: Promise<string>;
}

export function rawClient(port: number, options: { localAddress?: string } = {}): Promise<RawClient> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', ...(options.localAddress ? { localAddress: options.localAddress } : {}) });
    const chunks: Buffer[] = [];
    let closed = false;
    let markClosed: () => void = () => {};
    let markFirst: (text: string) => void = () => {};
    const client: RawClient = {
      socket,
      received: () => Buffer.concat(chunks).toString('latin1'),
      get closed() {
        return closed;
      },
      whenClosed: new Promise((done) => (markClosed = done)),
      firstChunk: new Promise((done) => (markFirst = done)),
    };
    socket.on('data', (chunk: Buffer) => {
      if (!chunks.length) markFirst(chunk.toString('latin1'));
      chunks.push(chunk);
    });
    // A server that drops a connection may reset it: that is an answer here, not a failure.
    socket.on('error', () => {});
    socket.once('close', () => {
      closed = true;
      markFirst('');
      markClosed();
    });
    socket.once('connect', () => resolve(client));
    socket.once('error', (err) => {
      if (!socket.connecting) return;
      reject(err);
    });
  });
}

/** The HTTP responses in a received byte stream: status, headers and body of each. */
export function parseResponses(text: string): { status: number; headers: Record<string, string>; body: string }[] {
  const out: { status: number; headers: Record<string, string>; body: string }[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) break;
    const [statusLine = '', ...lines] = rest.slice(0, end).split('\r\n');
    const headers = Object.fromEntries(lines.map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
    }));
    const length = Number(headers['content-length'] ?? 0);
    const body = Buffer.from(rest.slice(end + 4), 'latin1').subarray(0, length).toString('utf8');
    out.push({ status: Number(statusLine.split(' ')[1]), headers, body });
    rest = rest.slice(end + 4 + Buffer.byteLength(body, 'utf8'));
  }
  return out;
}

/** GET over a fresh connection from a chosen local address (loopback has 127.0.0.0/8 to pick from). */
export function getFrom(localAddress: string, port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = get({ host: '127.0.0.1', port, path, localAddress, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
  });
}

/** The open connections of a server. */
export function connectionsOf(server: { getConnections(cb: (err: Error | null, count: number) => void): void }): Promise<number> {
  return new Promise((resolve, reject) => server.getConnections((err, count) => (err ? reject(err) : resolve(count))));
}

export type ProxyMode = 'open' | 'down' | 'frozen';

/**
 * A TCP proxy on loopback between the service and its database, that a test turns:
 * `down` (the port refuses connections and open ones are cut, as when the server stops),
 * `frozen` (connections are accepted and kept, but no byte goes through either way, as when the
 * server hangs), or `open` again (held bytes are delivered in order).
 */
export interface TcpProxy {
  port: number;
  set(mode: ProxyMode): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: ProxyMode = 'open';
  const links = new Set<{ ends: Socket[]; held: Map<Socket, Buffer[]> }>();
  const server = createServer((client) => {
    const upstream = connect(target);
    const link = { ends: [client, upstream], held: new Map<Socket, Buffer[]>([[client, []], [upstream, []]]) };
    links.add(link);
    const forward = (from: Socket, to: Socket) => from.on('data', (chunk: Buffer) => {
      if (mode === 'frozen') link.held.get(to)?.push(chunk);
      else to.write(chunk);
    });
    forward(client, upstream);
    forward(upstream, client);
    for (const end of link.ends) {
      end.on('error', () => {});
      end.once('close', () => {
        links.delete(link);
        for (const other of link.ends) other.destroy();
      });
    }
  });
  const listen = (port: number) => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  await listen(0);
  const { port } = server.address() as { port: number };
  return {
    port,
    async set(next) {
      if (next === mode) return;
      const was = mode;
      mode = next;
      if (next === 'down') {
        for (const link of links) for (const end of link.ends) end.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      } else if (was === 'down') {
        await listen(port);
      }
      if (next === 'open') {
        for (const link of links) {
          for (const [to, chunks] of link.held) for (const chunk of chunks.splice(0)) to.write(chunk);
        }
      }
    },
    async close() {
      for (const link of links) for (const end of link.ends) end.destroy();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
