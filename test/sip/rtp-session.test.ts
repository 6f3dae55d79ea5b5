// RtpSession against raw UDP sockets playing the far end, so every byte on the wire is seen.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import { buildDtmfPayload, dtmfPackets } from '../../src/sip/rtp/dtmf.ts';
import { buildRtp, parseRtp } from '../../src/sip/rtp/packet.ts';
import type { RtpPacketView } from '../../src/sip/rtp/packet.ts';
import { RtpPortPool } from '../../src/sip/rtp/ports.ts';
import { buildBye, buildReport, parseRtcp } from '../../src/sip/rtp/rtcp.ts';
import { RtpSession } from '../../src/sip/rtp/session.ts';
import type { RtpRemote } from '../../src/sip/rtp/session.ts';
import { next, within } from '../helpers/sip-media.ts';

interface Far {
  sock: dgram.Socket;
  port: number;
  got: Buffer[];
  wait(count: number): Promise<Buffer[]>;
}

async function far(): Promise<Far> {
  const sock = dgram.createSocket('udp4');
  const got: Buffer[] = [];
  const waiters = new Set<() => void>();
  sock.on('message', (buf) => {
    got.push(buf);
    for (const w of [...waiters]) w();
  });
  await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', resolve));
  return {
    sock,
    port: sock.address().port,
    got,
    wait: (count) => within(new Promise<Buffer[]>((resolve) => {
      const check = (): void => {
        if (got.length >= count) {
          waiters.delete(check);
          resolve(got.slice(0, count));
        }
      };
      waiters.add(check);
      check();
    }), 5000, `${count} datagrams`),
  };
}

/** The packet types of a compound RTCP datagram, in order (200 SR, 201 RR, 202 SDES, 203 BYE). */
function rtcpTypes(datagram: Buffer): number[] {
  const types: number[] = [];
  for (let pos = 0; pos + 4 <= datagram.length; pos += 4 + datagram.readUInt16BE(pos + 2) * 4) types.push(datagram[pos + 1] ?? 0);
  return types;
}

const rtp = (seq: number, ts: number, payload: Buffer, pt = 0, ssrc = 0xabc): Buffer => buildRtp({ payloadType: pt, sequenceNumber: seq, timestamp: ts, ssrc, marker: false }, payload);

describe('RTP session', () => {
  const pool = new RtpPortPool({ min: 20400, max: 20449 }, '127.0.0.1');
  const socks: dgram.Socket[] = [];
  let session: RtpSession;
  let peer: Far;
  let peerRtcp: Far;
  const remote = (over: Partial<RtpRemote> = {}): RtpRemote => ({ remoteAddress: '127.0.0.1', remotePort: peer.port, remoteRtcpPort: peerRtcp.port, codec: 'PCMU', payloadType: 0, dtmfPayloadType: 101, ...over });

  beforeEach(async () => {
    peer = await far();
    peerRtcp = await far();
    socks.push(peer.sock, peerRtcp.sock);
    session = await RtpSession.open({ pool, rtcpIntervalMs: 60_000, jitterDepthMs: 40 });
  });
  afterEach(() => {
    session.close();
    for (const s of socks.splice(0)) s.close();
  });
  after(async () => {
    await within((async () => {
      while (pool.inUse > 0) await new Promise((r) => setTimeout(r, 5));
    })(), 5000, 'every port back in the pool');
  });

  it('numbers frames: sequence +1, timestamp +160, marker on the first, one SSRC', async () => {
    session.setRemote(remote());
    for (let i = 0; i < 3; i++) assert.equal(session.send(Buffer.alloc(160, i)), true);
    const packets = (await peer.wait(3)).map(parseRtp);
    const [a, b, c] = packets as [RtpPacketView, RtpPacketView, RtpPacketView];
    assert.deepEqual([b.sequenceNumber - a.sequenceNumber, (c.sequenceNumber - b.sequenceNumber) & 0xffff], [1, 1]);
    assert.deepEqual([(b.timestamp - a.timestamp) >>> 0, (c.timestamp - b.timestamp) >>> 0], [160, 160]);
    assert.deepEqual(packets.map((p) => p.marker), [true, false, false]);
    assert.ok(packets.every((p) => p.ssrc === session.ssrc && p.payloadType === 0));
    assert.equal(session.nextTimestamp, (a.timestamp + 480) >>> 0);
  });

  it('plays received frames in order at 20 ms, with silence for a lost one', async () => {
    session.setRemote(remote());
    const frames: number[] = [];
    session.on('audio', (f) => frames.push(f.concealed ? -1 : f.payload[0] ?? 0));
    for (const i of [0, 2, 1, 4, 5, 6]) peer.sock.send(rtp(100 + i, 8000 + i * 160, Buffer.alloc(160, i + 1)), session.localPort, '127.0.0.1');
    await within((async () => {
      while (frames.length < 7) await next(session, 'audio');
    })(), 5000, 'seven frames');
    assert.deepEqual(frames.slice(0, 7), [1, 2, 3, -1, 5, 6, 7]);
    assert.equal(session.stats().packetsLost, 1);
  });

  it('latches onto where packets come from, and a stray source cannot take over', async () => {
    const silent = await far();
    socks.push(silent.sock);
    const stray = await far();
    socks.push(stray.sock);
    session.setRemote(remote({ remotePort: silent.port })); // the SDP names a port nobody sends from
    peer.sock.send(rtp(1, 160, Buffer.alloc(160, 9)), session.localPort, '127.0.0.1');
    await within((async () => {
      while (session.stats().packetsReceived < 1) await new Promise((r) => setTimeout(r, 5));
    })(), 5000, 'first packet');
    session.send(Buffer.alloc(160));
    await peer.wait(1);
    stray.sock.send(rtp(50, 99_000, Buffer.alloc(160), 0, 0x999), session.localPort, '127.0.0.1');
    await within((async () => {
      while (session.stats().dropped.foreignSource < 1) await new Promise((r) => setTimeout(r, 5));
    })(), 5000, 'stray packet');
    session.send(Buffer.alloc(160));
    await peer.wait(2);
    assert.deepEqual([silent.got.length, stray.got.length], [0, 0]);
  });

  /** A far end on another loopback address: another machine as far as latching can tell. */
  async function stranger(address: string): Promise<Far> {
    const sock = dgram.createSocket('udp4');
    const got: Buffer[] = [];
    sock.on('message', (buf) => got.push(buf));
    await new Promise<void>((resolve) => sock.bind(0, address, resolve));
    socks.push(sock);
    return { sock, port: sock.address().port, got, wait: () => Promise.reject(new Error('not waited on')) };
  }
  const until = async (what: string, done: () => boolean): Promise<void> => within((async () => {
    while (!done()) await new Promise((r) => setTimeout(r, 5));
  })(), 5000, what);

  it('2: an attacker sending first from another address is dropped: it is never heard, never sent to', async () => {
    const attacker = await stranger('127.0.3.20');
    session.setRemote(remote({ signalAddress: '127.0.0.1' }));
    const heard: number[] = [];
    session.on('audio', (f) => f.missing < f.payload.length && heard.push(f.payload[0] ?? 0));
    for (let i = 0; i < 10; i++) attacker.sock.send(rtp(i, i * 160, Buffer.alloc(160, 0x66)), session.localPort, '127.0.0.1');
    attacker.sock.send(buildReport({ ssrc: 0x666, sender: null, cname: 'x', block: null }), session.localPort + 1, '127.0.0.1');
    await until('the attack dropped', () => session.stats().dropped.foreignSource >= 11);
    for (let i = 0; i < 5; i++) peer.sock.send(rtp(100 + i, 16_000 + i * 160, Buffer.alloc(160, 0x11)), session.localPort, '127.0.0.1');
    await until('the caller heard', () => heard.length >= 3);
    session.send(Buffer.alloc(160, 0x22));
    await peer.wait(1);
    assert.deepEqual([...new Set(heard)], [0x11], 'only the caller is heard');
    assert.equal(session.stats().packetsReceived, 5);
    assert.equal(attacker.got.length, 0, 'nothing went to the attacker');
  });

  it('2: after seconds of silence (DTX), a new source cannot take the stream over, from another address or another port', async () => {
    let now = 0;
    const quiet = await RtpSession.open({ pool, rtcpIntervalMs: 60_000, now: () => now });
    try {
      const attacker = await stranger('127.0.3.21');
      const sameHost = await far(); // 127.0.0.1, another port: a spoofed or stray source beside the caller
      socks.push(sameHost.sock);
      quiet.setRemote(remote());
      peer.sock.send(rtp(1, 160, Buffer.alloc(160, 1)), quiet.localPort, '127.0.0.1');
      await until('the caller latched', () => quiet.stats().packetsReceived === 1);
      now += 5000; // the caller's phone stops sending while its user listens
      // Each sends a steady stream (many packets in a row, which is what used to win the latch after a second of silence).
      for (const source of [attacker, sameHost]) {
        for (let i = 0; i < 20; i++) {
          source.sock.send(rtp(50 + i, 99_000 + i * 160, Buffer.alloc(160)), quiet.localPort, '127.0.0.1');
          now += 20;
        }
        await until('a stream dropped', () => quiet.stats().dropped.foreignSource >= (source === attacker ? 20 : 40));
      }
      quiet.send(Buffer.alloc(160, 0x22));
      await peer.wait(1);
      assert.deepEqual([quiet.stats().packetsReceived, attacker.got.length, sameHost.got.length], [1, 0, 0]);
    } finally {
      quiet.close();
    }
  });

  it('2: behind NAT (an SDP address we may not reach), the signalling source is learned at the start, and only it, and only then', async () => {
    let now = 0;
    const natted = await RtpSession.open({ pool, rtcpIntervalMs: 60_000, now: () => now, allowAddress: (ip) => ip.startsWith('127.') });
    const late = await RtpSession.open({ pool, rtcpIntervalMs: 60_000, now: () => now, allowAddress: (ip) => ip.startsWith('127.') });
    try {
      const phone = await stranger('127.0.3.22'); // where the INVITE came from
      const attacker = await stranger('127.0.3.23');
      const lan = { remoteAddress: '192.168.1.20', remotePort: 40_000, remoteRtcpPort: 40_001, signalAddress: '127.0.3.22' };
      natted.setRemote(remote(lan));
      assert.equal(natted.send(Buffer.alloc(160)), false, 'nothing goes to the LAN address');
      attacker.sock.send(rtp(1, 160, Buffer.alloc(160)), natted.localPort, '127.0.0.1');
      now += 500;
      phone.sock.send(rtp(1, 160, Buffer.alloc(160, 3)), natted.localPort, '127.0.0.1');
      await until('the phone learned', () => natted.stats().packetsReceived === 1);
      assert.equal(natted.send(Buffer.alloc(160)), true);
      await until('our frame at the phone', () => phone.got.length === 1);
      assert.equal(natted.stats().dropped.foreignSource, 1, 'the attacker was dropped, although it came first');
      // Past the window, the signalling source is no longer learned.
      late.setRemote(remote(lan));
      now += 3001;
      phone.sock.send(rtp(1, 160, Buffer.alloc(160, 3)), late.localPort, '127.0.0.1');
      await until('dropped', () => late.stats().dropped.foreignSource === 1);
      assert.equal(late.stats().packetsReceived, 0);
    } finally {
      natted.close();
      late.close();
    }
  });

  it('sends and takes nothing from an address the policy refuses, and nothing while on hold', async () => {
    const strict = await RtpSession.open({ pool, allowAddress: () => false });
    try {
      strict.setRemote(remote());
      assert.equal(strict.send(Buffer.alloc(160)), false);
      peer.sock.send(rtp(1, 160, Buffer.alloc(160)), strict.localPort, '127.0.0.1');
      await within((async () => {
        while (strict.stats().dropped.refusedAddress < 2) await new Promise((r) => setTimeout(r, 5));
      })(), 5000, 'refusal');
      assert.equal(strict.stats().packetsReceived, 0);
    } finally {
      strict.close();
    }
    session.setRemote(remote({ direction: 'recvonly' }));
    assert.equal(session.send(Buffer.alloc(160)), false, 'the far end put us on hold');
  });

  it('sends a key press as RFC 4733 events while holding audio back', async () => {
    session.setRemote(remote());
    session.send(Buffer.alloc(160));
    const done = session.sendDtmf('7', { durationMs: 60 });
    assert.equal(session.send(Buffer.alloc(160)), false, 'no audio during the event');
    await done;
    const events = (await peer.wait(1 + 2 + 3)).slice(1).map(parseRtp);
    assert.ok(events.every((p) => p.payloadType === 101 && p.timestamp === events[0]?.timestamp));
    assert.deepEqual(events.map((p) => [p.marker, p.payload[0], (p.payload[1] ?? 0) >> 7]), [[true, 7, 0], [false, 7, 0], [false, 7, 1], [false, 7, 1], [false, 7, 1]]);
    assert.equal(session.send(Buffer.alloc(160)), true);
    const after = parseRtp((await peer.wait(7))[6] as Buffer);
    assert.ok(((after.timestamp - (events[0]?.timestamp ?? 0)) | 0) >= 480, 'audio resumes after the event');
  });

  it('reports one digit per key press received, whatever the repeats', async () => {
    session.setRemote(remote());
    const digits: string[] = [];
    session.on('dtmf', (d) => digits.push(d.digit));
    let seq = 10;
    for (const [digit, ts] of [['5', 1000], ['#', 3000]] as const) {
      for (const p of dtmfPackets(digit, 100)) peer.sock.send(rtp(seq++, ts, buildDtmfPayload(p), 101), session.localPort, '127.0.0.1');
    }
    await within((async () => {
      while (session.stats().packetsReceived < 14) await new Promise((r) => setTimeout(r, 5));
    })(), 5000, 'fourteen packets');
    assert.deepEqual(digits, ['5', '#']);
    assert.equal(session.stats().packetsLost, 0, 'events count in the sequence space');
  });

  it('says when nothing has arrived for a while', async () => {
    const watched = await RtpSession.open({ pool, inactivityMs: 80 });
    try {
      watched.setRemote(remote());
      await next(watched, 'inactive', 5000);
    } finally {
      watched.close();
    }
  });

  it('sends RTCP reports and reads what the far end reports about us', async () => {
    const reporting = await RtpSession.open({ pool, rtcpIntervalMs: 40, cname: 'parley-test' });
    try {
      reporting.setRemote(remote());
      reporting.send(Buffer.alloc(160));
      const [sr] = await peerRtcp.wait(1);
      const report = parseRtcp(sr as Buffer).reports[0];
      assert.equal(report?.ssrc, reporting.ssrc);
      assert.equal(report?.sender?.packetCount, 1);
      const rr = buildReport({ ssrc: 0xabc, sender: null, cname: 'far', block: { ssrc: reporting.ssrc, fractionLost: 64, packetsLost: 3, highestSequence: 1, jitter: 80, lsr: 0, dlsr: 0 } });
      peerRtcp.sock.send(rr, reporting.localPort + 1, '127.0.0.1');
      await within((async () => {
        while (!reporting.stats().remote) await new Promise((r) => setTimeout(r, 5));
      })(), 5000, 'their report');
      const theirs = reporting.stats().remote;
      assert.deepEqual([theirs?.packetsLost, theirs?.fractionLost, theirs?.jitterMs], [3, 0.25, 10]);
      peer.sock.send(rtp(1, 160, Buffer.alloc(160), 0, 0xabc), reporting.localPort, '127.0.0.1');
      await within((async () => {
        while (reporting.stats().packetsReceived < 1) await new Promise((r) => setTimeout(r, 5));
      })(), 5000, 'a packet');
      const bye = next(reporting, 'bye');
      peerRtcp.sock.send(buildBye(0xabc), reporting.localPort + 1, '127.0.0.1');
      await bye;
      const before = peerRtcp.got.length;
      reporting.close();
      const saidBye = (): boolean => peerRtcp.got.slice(before).some((b) => parseRtcp(b).byes.includes(reporting.ssrc));
      await within((async () => {
        while (!saidBye()) await new Promise((r) => setTimeout(r, 5));
      })(), 5000, 'our RTCP BYE');
      // RFC 3550 §6.1: the BYE travels in a compound packet that starts with SR or RR, never alone.
      const last = peerRtcp.got.at(-1) as Buffer;
      const [first, ...rest] = rtcpTypes(last);
      assert.ok(first === 200 || first === 201, `starts with SR or RR, not ${first}`);
      assert.deepEqual(rest, [202, 203], 'then SDES and BYE, in the same datagram');
      const parsed = parseRtcp(last);
      assert.deepEqual([parsed.reports.map((r) => r.ssrc), parsed.byes], [[reporting.ssrc], [reporting.ssrc]]);
    } finally {
      reporting.close();
    }
  });
});
