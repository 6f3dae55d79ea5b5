/**
 * The media thread's code, as CommonJS source for an eval worker (see media-thread.ts for why
 * RTP lives on its own thread, and for the messages). Plain JavaScript with no imports but Node's
 * own, so the same text runs under tsx and from the compiled service.
 *
 * It owns every RTP and RTCP socket of the process. Datagrams that arrive are forwarded to the
 * main thread, several per message. Paced packets wait in their session's queue and go out one
 * per 20 ms: a run (a talkspurt) starts when its first packet arrives, and each later packet is
 * due 20 ms after the one before, whenever it was handed over. A packet handed over after its due
 * time goes out at once, and its lateness is counted: that is what a phone hears as a gap.
 */
export const MEDIA_WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const dgram = require('node:dgram');
const FRAME_MS = 20;
// The figures live in memory the main thread reads (RtpFigures): the lateness histogram in
// LatenessHistogram's layout, recorded as its record() does, and the late hand-overs.
const { memory, counters, layout } = workerData;
const totals = new Float64Array(memory, 0, 2);
const bins = new Uint32Array(memory, layout.binsOffset, layout.bins + 1);
const lateHandovers = new Uint32Array(counters);
const sessions = new Map();
let inbound = [];
let forwardScheduled = false;
let timer = null;
let timerAt = Infinity;
const now = () => performance.now();

function record(late) {
  const l = late > 0 ? late : 0;
  bins[Math.min(layout.bins, Math.floor(l / layout.binMs))] += 1;
  totals[0] += 1;
  if (l > totals[1]) totals[1] = l;
}

function forward() {
  forwardScheduled = false;
  const batch = inbound;
  inbound = [];
  parentPort.postMessage({ op: 'in', batch });
}

function bindSocket(socket, port, host) {
  return new Promise((resolve) => {
    const onError = () => resolve(false);
    socket.once('error', onError);
    socket.bind({ port, address: host, exclusive: true }, () => {
      socket.off('error', onError);
      resolve(true);
    });
  });
}

function closeSocket(s) {
  try { s.close(); } catch {}
}

async function open(id, port, host, family) {
  const rtp = dgram.createSocket(family);
  const rtcp = dgram.createSocket(family);
  const ok = (await bindSocket(rtp, port, host)) && (await bindSocket(rtcp, port + 1, host));
  if (!ok) {
    closeSocket(rtp);
    closeSocket(rtcp);
    return parentPort.postMessage({ op: 'opened', id, ok: false });
  }
  const session = { rtp, rtcp, queue: [], head: 0, due: 0, lastSent: -Infinity, inflight: 0, closing: false, closed: undefined, drains: [] };
  sessions.set(id, session);
  const listen = (socket, kind) => {
    socket.on('message', (buf, rinfo) => {
      inbound.push(id, kind, buf, rinfo.address, rinfo.port);
      if (!forwardScheduled) {
        forwardScheduled = true;
        setImmediate(forward);
      }
    });
    socket.on('error', (err) => parentPort.postMessage({ op: 'error', id, kind, message: String(err && err.message || err) }));
  };
  listen(rtp, 0);
  listen(rtcp, 1);
  parentPort.postMessage({ op: 'opened', id, ok: true });
}

function sent(session) {
  session.inflight -= 1;
  if (session.closing && session.inflight === 0) finish(session);
}

function transmit(session, socket, bytes, port, address, done) {
  session.inflight += 1;
  socket.send(bytes, port, address, () => {
    sent(session);
    if (done !== undefined) parentPort.postMessage({ op: 'ack', ack: done });
  });
}

function finish(session) {
  closeSocket(session.rtp);
  closeSocket(session.rtcp);
  parentPort.postMessage({ op: 'ack', ack: session.closed });
}

function queued(session) {
  return session.queue.length - session.head;
}

function drained(session) {
  for (const ack of session.drains) parentPort.postMessage({ op: 'ack', ack });
  session.drains = [];
}

function enqueue(session, bytes, port, address, startsRun) {
  if (queued(session) === 0) {
    session.queue = [];
    session.head = 0;
    // A new talkspurt starts now (never closer than a frame to the last packet sent); a packet
    // that continues the run keeps its place on the run's 20 ms grid, late or not.
    if (startsRun || session.lastSent === -Infinity) {
      session.due = Math.max(now(), session.lastSent + FRAME_MS);
      return void session.queue.push({ bytes, port, address, startsRun: true });
    }
    if (now() > session.due + 0.5) lateHandovers[0] += 1;
  }
  session.queue.push({ bytes, port, address, startsRun: false });
}

function pump() {
  timer = null;
  timerAt = Infinity;
  const t = now();
  let next = Infinity;
  for (const session of sessions.values()) {
    while (queued(session) > 0 && session.due <= t + 0.5) {
      const packet = session.queue[session.head];
      session.queue[session.head] = undefined;
      session.head += 1;
      if (session.head >= 256) {
        // A call that never pauses never empties its queue: drop the sent part now and then.
        session.queue = session.queue.slice(session.head);
        session.head = 0;
      }
      if (!packet.startsRun) record(t - session.due);
      transmit(session, session.rtp, packet.bytes, packet.port, packet.address);
      session.lastSent = t;
      session.due += FRAME_MS;
      if (queued(session) === 0) drained(session);
    }
    if (queued(session) > 0 && session.due < next) next = session.due;
  }
  schedule(next);
}

function schedule(at) {
  if (at === Infinity || at >= timerAt) return;
  if (timer !== null) clearTimeout(timer);
  timerAt = at;
  timer = setTimeout(pump, Math.max(0, at - now()));
}

function handle(item) {
  const session = sessions.get(item[1]);
  switch (item[0]) {
    case 'rtp': // [op, id, bytes, port, address, startsRun]
      if (!session) return;
      enqueue(session, item[2], item[3], item[4], item[5]);
      schedule(session.due);
      return;
    case 'rtcp': // [op, id, bytes, port, address, ack?]
      if (!session) {
        if (item[5] !== undefined) parentPort.postMessage({ op: 'ack', ack: item[5] });
        return;
      }
      transmit(session, session.rtcp, item[2], item[3], item[4], item[5]);
      return;
    case 'flush': // [op, id]
      if (!session) return;
      session.queue = [];
      session.head = 0;
      drained(session);
      return;
    case 'drain': // [op, id, ack]
      if (!session || queued(session) === 0) return parentPort.postMessage({ op: 'ack', ack: item[2] });
      session.drains.push(item[2]);
      return;
    case 'close': // [op, id, ack]: after what was handed over before it has left the sockets; a
      // closing session is out of the map, so nothing more reaches it
      if (!session) return parentPort.postMessage({ op: 'ack', ack: item[2] });
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

parentPort.on('message', (message) => {
  switch (message.op) {
    case 'open':
      return void open(message.id, message.port, message.host, message.family);
    case 'batch':
      for (const item of message.items) handle(item);
      return;
  }
});
// Ahead of the busy threads when the host allows it (root or CAP_SYS_NICE), as media servers
// ask for: on Linux a thread's nice value is its own, set through its thread id.
let priority = 'default';
try {
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  require('node:os').setPriority(tid, -10);
  priority = 'raised';
} catch {}
parentPort.postMessage({ kind: 'ready', priority });
`;
