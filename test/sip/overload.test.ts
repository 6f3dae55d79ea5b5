// One source must not deny SIP to everyone: a UDP flood at the per-source rate keeps to its share
// of the transaction table while another source is answered and our BYE goes out; floods of
// bytes are held to a byte budget; drip-fed TCP connections are cut at their deadlines and
// cannot keep a trunk, or our own outgoing connections, out. Sources on other loopback addresses
// (127.0.3.x) stand for other machines.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import net from 'node:net';
import { describe, it } from 'node:test';
import type { Dialog } from '../../src/sip/dialog.ts';
import { SipEndpoint } from '../../src/sip/endpoint.ts';
import { SipParseError, parseMessage } from '../../src/sip/message.ts';
import { newRequest } from '../../src/sip/requests.ts';
import { buildOffer } from '../../src/sip/sdp.ts';
import { isRequest, isResponse, rawPeer, reply, request } from '../helpers/raw-sip-peer.ts';
import type { RawPeer } from '../helpers/raw-sip-peer.ts';
import { until } from '../helpers/until.ts';

const SDP = buildOffer({ address: '127.0.0.1', port: 20398, sessionId: 5, sessionVersion: 1 });
let seq = 0;
const callId = (): string => `call-${++seq}@overload.test`;

/** A UDP socket sending OPTIONS to `port` at `perSecond` until stopped; counts what comes back. */
async function optionsFlood(port: number, perSecond: number, address = '127.0.0.1'): Promise<{ answered: () => number; stop(): Promise<void> }> {
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => sock.bind(0, address, resolve));
  let answered = 0;
  sock.on('message', () => answered++);
  const own = sock.address().port;
  let n = 0;
  const burst = (): void => {
    for (let i = 0; i < perSecond / 50; i++) {
      const id = `flood-${++n}`;
      sock.send(`OPTIONS sip:x@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP ${address}:${own};branch=z9hG4bK${id};rport\r\nFrom: <sip:f@${address}>;tag=f\r\nTo: <sip:x@127.0.0.1>\r\nCall-ID: ${id}\r\nCSeq: 1 OPTIONS\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n`, port, '127.0.0.1');
    }
  };
  const timer = setInterval(burst, 20);
  burst();
  return { answered: () => answered, stop: () => new Promise((resolve) => (clearInterval(timer), sock.close(() => resolve()))) };
}

/** An INVITE from `peer` answered 200 by the endpoint and ACKed: the endpoint's side of the call. */
async function callFrom(endpoint: SipEndpoint, peer: RawPeer, address: string): Promise<Dialog> {
  const id = callId();
  const fields = { From: `<sip:caller@${address}:${peer.port}>;tag=c`, To: `<sip:parley@127.0.0.1:${endpoint.port}>`, 'Call-ID': id, CSeq: '1 INVITE', Contact: `<sip:caller@${address}:${peer.port}>` };
  const answered = new Promise<Dialog>((resolve) => endpoint.onInvite((call) => resolve(call.answer(SDP))));
  peer.send(request('INVITE', `sip:parley@127.0.0.1:${endpoint.port}`, peer.port, fields, SDP, address), endpoint.port);
  const [ok] = await peer.waitFor((m) => isResponse(200, 'INVITE')(m) && m.headers.get('Call-ID') === id, 1, 10_000);
  const to = ok?.msg.headers.get('To') ?? '';
  peer.send(request('ACK', `sip:parley@127.0.0.1:${endpoint.port}`, peer.port, { ...fields, To: to, CSeq: '1 ACK' }, '', address), endpoint.port);
  return answered;
}

describe('SIP under floods', () => {
  it('1: a source flooding OPTIONS at its rate keeps to its share; another source is answered and our BYE goes out, all while the flood runs', { timeout: 60_000 }, async () => {
    // A small table, so that the flood fills what it may within a second; Timer J keeps each of
    // its OPTIONS transactions 32 s, as it does in production.
    const endpoint = await SipEndpoint.start({ host: '127.0.0.1', port: 0, limits: { maxTransactions: 200, clientReserve: 40, perSource: 40 } });
    const trunk = await rawPeer('127.0.3.2');
    trunk.onMessage = ({ msg }) => {
      if (msg.kind === 'request' && msg.method === 'BYE') trunk.send(reply(msg, 200, 'OK'), endpoint.port);
    };
    const flood = await optionsFlood(endpoint.port, 500, '127.0.3.1');
    try {
      await until('the flood answered beyond its share', flood.answered, (n) => n >= 120, 30_000, 20);
      const options = { From: `<sip:t@127.0.3.2:${trunk.port}>;tag=t`, To: '<sip:parley@127.0.0.1>', 'Call-ID': callId(), CSeq: '1 OPTIONS' };
      trunk.send(request('OPTIONS', `sip:parley@127.0.0.1:${endpoint.port}`, trunk.port, options, '', '127.0.3.2'), endpoint.port);
      const [pong] = await trunk.waitFor((m) => m.kind === 'response' && m.headers.get('Call-ID') === options['Call-ID'], 1, 10_000);
      assert.equal(pong?.msg.kind === 'response' && pong.msg.status, 200, 'the trunk\'s OPTIONS is answered, not refused');
      const dialog = await callFrom(endpoint, trunk, '127.0.3.2');
      await dialog.bye();
      await trunk.waitFor(isRequest('BYE'), 1, 10_000);
      assert.equal(endpoint.stats().byeFailures, 0);
      assert.ok(endpoint.stats().refusedRequests === 0, 'the flood was recycled within its share, not refused');
      assert.ok(endpoint.transactions.size <= 40 + 5, `${endpoint.transactions.size} transactions: the flood holds its share and no more`);
    } finally {
      await flood.stop();
      await trunk.close();
      await endpoint.close();
    }
  });

  it('1: our BYE that gets no answer is counted and logged, and one that finds the table full waits for room', { timeout: 60_000 }, async () => {
    const warnings: string[] = [];
    const log = { debug: () => undefined, info: () => undefined, warn: (_: object, msg?: string) => void warnings.push(msg ?? '') };
    const endpoint = await SipEndpoint.start({ host: '127.0.0.1', port: 0, log, timers: { t1: 20, t2: 160, t4: 200 }, limits: { maxTransactions: 4, clientReserve: 1 } });
    const phone = await rawPeer('127.0.3.3');
    try {
      // The table full of our own pings, answered only after a while: the BYE waits, then goes out.
      phone.onMessage = ({ msg }) => {
        if (msg.kind !== 'request') return;
        if (msg.method === 'OPTIONS') setTimeout(() => phone.send(reply(msg, 200, 'OK'), endpoint.port), 300);
        if (msg.method === 'BYE') phone.send(reply(msg, 200, 'OK'), endpoint.port);
      };
      const waiting = await callFrom(endpoint, phone, '127.0.3.3');
      await until('the INVITE transaction ended by the ACK', () => endpoint.transactions.size, (n) => n === 0, 10_000, 5);
      const pings = [1, 2, 3, 4].map(() => waiting.ping());
      await until('a full table', () => endpoint.transactions.size, (n) => n >= 4, 10_000, 5);
      await waiting.bye();
      await Promise.all(pings);
      await phone.waitFor(isRequest('BYE'), 1, 10_000);
      assert.equal(endpoint.stats().byeFailures, 0);
      // A phone that never answers the BYE: counted and logged, not lost in silence.
      phone.onMessage = null;
      const silent = await callFrom(endpoint, phone, '127.0.3.3');
      await silent.bye();
      assert.equal(endpoint.stats().byeFailures, 1);
      assert.ok(warnings.some((w) => /our BYE failed/.test(w)), warnings.join('; '));
    } finally {
      await phone.close();
      await endpoint.close();
    }
  });

  it('5: a head of 9,000 one-letter headers is refused before they are read, and bytes count in the rate limit', async () => {
    const headers = Array.from({ length: 9000 }, () => 'a: b').join('\r\n');
    const wire = Buffer.from(`OPTIONS sip:x@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:5;branch=z9hG4bKx\r\n${headers}\r\n\r\n`);
    assert.ok(wire.length > 40_000);
    assert.throws(() => parseMessage(wire), (err: unknown) => err instanceof SipParseError && /more than 256 header lines/.test(err.message));
    let now = 0;
    let parsedAndRefused = 0;
    const log = { debug: (_: object, msg?: string) => void (msg === 'sip: dropped unparseable datagram' && parsedAndRefused++), info: () => undefined, warn: () => undefined };
    const endpoint = await SipEndpoint.start({ host: '127.0.0.1', port: 0, log, rateLimit: { now: () => now } });
    const sock = dgram.createSocket('udp4');
    const other = await rawPeer('127.0.3.5');
    /** Sends `count` of them one at a time, each once the one before was dealt with (so no socket buffer overflows). */
    const sendEach = async (count: number): Promise<void> => {
      for (let i = 0; i < count; i++) {
        const before = parsedAndRefused + endpoint.stats().droppedMessages;
        sock.send(wire, endpoint.port, '127.0.0.1');
        await until('the datagram dealt with', () => parsedAndRefused + endpoint.stats().droppedMessages, (n) => n > before, 10_000, 1);
      }
    };
    try {
      await new Promise<void>((resolve) => sock.bind(0, '127.0.3.4', resolve));
      // 100 such datagrams at one instant of the limiter's clock: within the 1,000-message burst, far beyond the 2 MiB one.
      await sendEach(100);
      const burst = Math.floor((2 * 1024 * 1024) / wire.length);
      assert.deepEqual([parsedAndRefused, endpoint.stats().droppedMessages], [burst, 100 - burst], 'what fits the byte burst is read (and refused), the rest dropped unread');
      const fields = { From: '<sip:o@127.0.3.5>;tag=o', To: '<sip:x@127.0.0.1>', 'Call-ID': callId(), CSeq: '1 OPTIONS' };
      other.send(request('OPTIONS', `sip:x@127.0.0.1:${endpoint.port}`, other.port, fields, '', '127.0.3.5'), endpoint.port);
      await other.waitFor(isResponse(200, 'OPTIONS'));
      now += 1000; // a second later the source has 1 MiB more
      await sendEach(30);
      const refill = Math.floor((2 * 1024 * 1024 - burst * wire.length + 1024 * 1024) / wire.length);
      assert.equal(parsedAndRefused, burst + refill);
    } finally {
      sock.close();
      await other.close();
      await endpoint.close();
    }
  });
});

/** A TCP client on `address` that sends `head` and then one byte of padding every `everyMs`. */
async function dripper(port: number, address: string, everyMs = 100): Promise<{ socket: net.Socket; closed: Promise<number> }> {
  const socket = net.connect({ host: '127.0.0.1', port, localAddress: address });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const opened = performance.now();
  socket.on('error', () => undefined);
  socket.write('OPTIONS sip:x@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1;branch=z9hG4bKdrip\r\nX-Pad: ');
  const timer = setInterval(() => socket.write('a'), everyMs);
  const closed = new Promise<number>((resolve) => socket.once('close', () => (clearInterval(timer), resolve(performance.now() - opened))));
  return { socket, closed };
}

function optionsOverTcp(port: number, address: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port, localAddress: address }, () => {
      socket.write(`OPTIONS sip:x@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/TCP ${address};branch=z9hG4bKtrunk${Date.now()}\r\nFrom: <sip:t@${address}>;tag=t\r\nTo: <sip:x@127.0.0.1>\r\nCall-ID: trunk-${Date.now()}\r\nCSeq: 1 OPTIONS\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n`);
    });
    let got = '';
    socket.on('data', (chunk) => {
      got += chunk.toString();
      if (/\r\n\r\n/.test(got)) {
        socket.destroy();
        resolve(got.split('\r\n')[0] ?? '');
      }
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`closed before an answer (${got.length} bytes)`)));
  });
}

describe('SIP over TCP under slowloris', () => {
  it('6: a drip-fed message is cut at its head deadline; a full table of drippers makes room for a trunk and never for our own connections\' sake', { timeout: 60_000 }, async () => {
    // Deadlines long enough that the drippers still hold the table when the trunk comes.
    const connections = { maxInbound: 8, maxOutbound: 2, maxPerAddress: 4, headMs: 5_000, bodyMs: 5_000, idleMs: 60_000 };
    const endpoint = await SipEndpoint.start({ host: '127.0.0.1', port: 0, limits: { connections } });
    const far = net.createServer();
    const reached: string[] = [];
    far.on('connection', (s) => s.on('data', (d) => reached.push(d.toString())));
    await new Promise<void>((resolve) => far.listen(0, '127.0.0.1', resolve));
    try {
      const drips: Array<Awaited<ReturnType<typeof dripper>>> = [];
      for (const address of ['127.0.3.10', '127.0.3.11']) for (let i = 0; i < 4; i++) drips.push(await dripper(endpoint.port, address));
      // A ninth from a full address is refused at once (32 per address in production).
      const refused = await dripper(endpoint.port, '127.0.3.10');
      assert.ok((await refused.closed) < 5_000);
      // Meanwhile the table is full of drippers: a trunk from a new address still gets in and is answered,
      const open = (): number => drips.filter((d) => !d.socket.destroyed).length;
      assert.equal(open(), 8, 'the drippers fill the table');
      assert.match(await optionsOverTcp(endpoint.port, '127.0.3.12'), /^SIP\/2\.0 200 /);
      assert.ok(open() >= 6, `${open()} drippers still open: the trunk took the place of one`);
      // and our own requests still get their connection.
      const ping = newRequest('OPTIONS', 'sip:far@127.0.0.1', [['From', '<sip:p@127.0.0.1>;tag=p'], ['To', '<sip:far@127.0.0.1>'], ['Call-ID', callId()], ['CSeq', '1 OPTIONS']]);
      const hop = { transport: 'tcp' as const, address: '127.0.0.1', port: (far.address() as net.AddressInfo).port };
      await endpoint.send(endpoint.stamp(ping, hop), hop);
      await until('our OPTIONS at the far end', () => reached.join(''), (text) => text.startsWith('OPTIONS '), 10_000, 10);
      // Every dripper is cut at its deadline (5 s here, 10 s in production), never answered.
      const lifetimes = await Promise.all(drips.map((d) => d.closed));
      assert.ok(lifetimes.every((ms) => ms < 20_000), `lifetimes ${lifetimes.map(Math.round).join(', ')} ms`);
      assert.equal(endpoint.stats().droppedMessages, 0);
    } finally {
      await endpoint.close();
      await new Promise<void>((resolve) => far.close(() => resolve()));
    }
  });

  it('6: a body that stops coming is cut at its deadline too, and a message sent whole is answered', { timeout: 60_000 }, async () => {
    const endpoint = await SipEndpoint.start({ host: '127.0.0.1', port: 0, limits: { connections: { headMs: 400, bodyMs: 400 } } });
    try {
      const socket = net.connect({ host: '127.0.0.1', port: endpoint.port, localAddress: '127.0.3.13' });
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      socket.on('error', () => undefined);
      const opened = performance.now();
      const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now() - opened)));
      socket.write('OPTIONS sip:x@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.3.13;branch=z9hG4bKbody\r\nContent-Length: 100\r\n\r\nonly this much');
      const timer = setInterval(() => socket.write('b'), 100);
      const lifetime = await closed;
      clearInterval(timer);
      assert.ok(lifetime < 10_000, `${Math.round(lifetime)} ms`);
      assert.match(await optionsOverTcp(endpoint.port, '127.0.3.14'), /^SIP\/2\.0 200 /);
    } finally {
      await endpoint.close();
    }
  });
});
