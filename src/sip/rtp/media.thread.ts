// The RTP media thread (see media-thread.ts for why RTP lives on a thread of its own, and for the
// messages). It owns every RTP and RTCP socket of the process. Datagrams that arrive are
// forwarded to the main thread, several per message. Paced packets wait in their session's queue
// and go out one per 20 ms: a run (a talkspurt) starts when its first packet arrives, and each
// later packet is due 20 ms after the one before, whenever it was handed over. A packet handed
// over after its due time goes out at once, and its lateness is counted: that is what a phone
// hears as a gap.
import dgram from 'node:dgram';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { LatenessHistogram } from '../../voice/lateness.ts';
import { threadData, threadPort } from '../../voice/thread.ts';
import type { FromMediaThread, MediaItem, MediaThreadData, ToMediaThread } from './media-thread.ts';

const FRAME_MS = 20;

interface Packet {
  bytes: Buffer;
  port: number;
  address: string;
  startsRun: boolean;
}

interface Session {
  rtp: dgram.Socket;
  rtcp: dgram.Socket;
  /** Paced packets; those before `head` were sent (dropped now and then, not per packet). */
  queue: (Packet | undefined)[];
  head: number;
  /** When the next packet of the run is due. */
  due: number;
  lastSent: number;
  /** Datagrams handed to a socket and not yet sent. */
  inflight: number;
  closing: boolean;
  closed: number | undefined;
  drains: number[];
}

const port = threadPort();
const send = (message: FromMediaThread) => port.postMessage(message);
// The figures live in memory the main thread reads (RtpFigures): the lateness histogram, and the late hand-overs.
const { memory, counters } = threadData<MediaThreadData>();
const lateness = new LatenessHistogram(memory);
const lateHandovers = new Uint32Array(counters);
const sessions = new Map<number, Session>();
let inbound: unknown[] = [];
let forwardScheduled = false;
let timer: NodeJS.Timeout | null = null;
let timerAt = Infinity;
const now = () => performance.now();

function forward(): void {
  forwardScheduled = false;
  const batch = inbound;
  inbound = [];
  send({ op: 'in', batch });
}

function bindSocket(socket: dgram.Socket, at: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const onError = () => resolve(false);
    socket.once('error', onError);
    socket.bind({ port: at, address: host, exclusive: true }, () => {
      socket.off('error', onError);
      resolve(true);
    });
  });
}

function closeSocket(socket: dgram.Socket): void {
  try {
    socket.close();
  } catch {
    // already closed
  }
}

async function open(id: number, at: number, host: string, family: 'udp4' | 'udp6'): Promise<void> {
  const rtp = dgram.createSocket(family);
  const rtcp = dgram.createSocket(family);
  const ok = (await bindSocket(rtp, at, host)) && (await bindSocket(rtcp, at + 1, host));
  if (!ok) {
    closeSocket(rtp);
    closeSocket(rtcp);
    return send({ op: 'opened', id, ok: false });
  }
  const session: Session = { rtp, rtcp, queue: [], head: 0, due: 0, lastSent: -Infinity, inflight: 0, closing: false, closed: undefined, drains: [] };
  sessions.set(id, session);
  const listen = (socket: dgram.Socket, kind: 0 | 1) => {
    socket.on('message', (buf, rinfo) => {
      inbound.push(id, kind, buf, rinfo.address, rinfo.port);
      if (!forwardScheduled) {
        forwardScheduled = true;
        setImmediate(forward);
      }
    });
    socket.on('error', (err) => send({ op: 'error', id, kind, message: String(err.message || err) }));
  };
  listen(rtp, 0);
  listen(rtcp, 1);
  send({ op: 'opened', id, ok: true });
}

function sent(session: Session): void {
  session.inflight -= 1;
  if (session.closing && session.inflight === 0) finish(session);
}

function transmit(session: Session, socket: dgram.Socket, bytes: Buffer, to: number, address: string, done?: number): void {
  session.inflight += 1;
  socket.send(bytes, to, address, () => {
    sent(session);
    if (done !== undefined) send({ op: 'ack', ack: done });
  });
}

function finish(session: Session): void {
  closeSocket(session.rtp);
  closeSocket(session.rtcp);
  if (session.closed !== undefined) send({ op: 'ack', ack: session.closed });
}

const queued = (session: Session) => session.queue.length - session.head;

function drained(session: Session): void {
  for (const ack of session.drains) send({ op: 'ack', ack });
  session.drains = [];
}

function enqueue(session: Session, bytes: Buffer, to: number, address: string, startsRun: boolean): void {
  if (queued(session) === 0) {
    session.queue = [];
    session.head = 0;
    // A new talkspurt starts now (never closer than a frame to the last packet sent); a packet
    // that continues the run keeps its place on the run's 20 ms grid, late or not.
    if (startsRun || session.lastSent === -Infinity) {
      session.due = Math.max(now(), session.lastSent + FRAME_MS);
      session.queue.push({ bytes, port: to, address, startsRun: true });
      return;
    }
    if (now() > session.due + 0.5) lateHandovers[0] = (lateHandovers[0] ?? 0) + 1;
  }
  session.queue.push({ bytes, port: to, address, startsRun: false });
}

function pump(): void {
  timer = null;
  timerAt = Infinity;
  const t = now();
  let next = Infinity;
  for (const session of sessions.values()) {
    while (queued(session) > 0 && session.due <= t + 0.5) {
      const packet = session.queue[session.head]!;
      session.queue[session.head] = undefined;
      session.head += 1;
      if (session.head >= 256) {
        // A call that never pauses never empties its queue: drop the sent part now and then.
        session.queue = session.queue.slice(session.head);
        session.head = 0;
      }
      if (!packet.startsRun) lateness.record(t - session.due);
      transmit(session, session.rtp, packet.bytes, packet.port, packet.address);
      session.lastSent = t;
      session.due += FRAME_MS;
      if (queued(session) === 0) drained(session);
    }
    if (queued(session) > 0 && session.due < next) next = session.due;
  }
  schedule(next);
}

function schedule(at: number): void {
  if (at === Infinity || at >= timerAt) return;
  if (timer !== null) clearTimeout(timer);
  timerAt = at;
  timer = setTimeout(pump, Math.max(0, at - now()));
}

function handle(item: MediaItem): void {
  const session = sessions.get(item[1]);
  switch (item[0]) {
    case 'rtp':
      if (!session) return;
      enqueue(session, Buffer.from(item[2]), item[3], item[4], item[5]);
      schedule(session.due);
      return;
    case 'rtcp':
      if (!session) {
        if (item[5] !== undefined) send({ op: 'ack', ack: item[5] });
        return;
      }
      transmit(session, session.rtcp, Buffer.from(item[2]), item[3], item[4], item[5]);
      return;
    case 'flush':
      if (!session) return;
      session.queue = [];
      session.head = 0;
      drained(session);
      return;
    case 'drain':
      if (!session || queued(session) === 0) return send({ op: 'ack', ack: item[2] });
      session.drains.push(item[2]);
      return;
    case 'close':
      // After what was handed over before it has left the sockets; a closing session is out of the map, so nothing more reaches it.
      if (!session) return send({ op: 'ack', ack: item[2] });
      session.closed = item[2];
      sessions.delete(item[1]);
      session.queue = [];
      session.head = 0;
      drained(session);
      session.closing = true;
      if (session.inflight === 0) finish(session);
      return;
  }
}

port.on('message', (message: ToMediaThread) => {
  if (message.op === 'open') return void open(message.id, message.port, message.host, message.family);
  for (const item of message.items) handle(item);
});

// Ahead of the busy threads when the host allows it (root or CAP_SYS_NICE), as media servers
// ask for: on Linux a thread's nice value is its own, set through its thread id.
let priority: 'raised' | 'default' = 'default';
try {
  setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), -10);
  priority = 'raised';
} catch {
  // not allowed here: the default priority
}
send({ kind: 'ready', priority });
