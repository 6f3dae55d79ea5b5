// The RTP building blocks on their own: jitter buffer, receiver statistics, DTMF
// payloads, RTCP reports, the port pool and the pacer.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { describe, it } from 'node:test';
import { DtmfReceiver, buildDtmfPayload, dtmfPackets, parseDtmfPayload } from '../../src/sip/rtp/dtmf.ts';
import { JitterBuffer } from '../../src/sip/rtp/jitter-buffer.ts';
import { RtpParseError, buildRtp, parseRtp } from '../../src/sip/rtp/packet.ts';
import { Pacer } from '../../src/sip/rtp/pacer.ts';
import { parsePortRange } from '../../src/config.ts';
import { RtpPortPool, RtpPortsExhaustedError } from '../../src/sip/rtp/ports.ts';
import { ReceiveStats } from '../../src/sip/rtp/receive-stats.ts';
import { buildBye, buildReport, ntpFromMs, ntpMiddle, parseRtcp } from '../../src/sip/rtp/rtcp.ts';
import { within } from '../helpers/sip-media.ts';

const frame = (value: number, samples = 160): Buffer => Buffer.alloc(samples, value);
const firstByte = (f: { payload: Buffer } | null): number | undefined => f?.payload[0];

describe('jitter buffer', () => {
  const jb = (): JitterBuffer => new JitterBuffer({ depthMs: 40, silence: 0xff });

  it('holds back its depth, then plays in timestamp order', () => {
    const b = jb();
    b.push(1000, frame(1));
    assert.equal(b.pop(), null, 'still filling');
    b.push(1320, frame(3)); // arrives before 1160
    b.push(1160, frame(2));
    assert.deepEqual([firstByte(b.pop()), firstByte(b.pop()), firstByte(b.pop())], [1, 2, 3]);
  });

  it('drops duplicates and late packets, and plays silence for what never came', () => {
    const b = jb();
    b.push(0, frame(1));
    b.push(160, frame(2));
    assert.equal(b.push(160, frame(2)), 'duplicate');
    b.push(480, frame(4)); // 320 is lost
    assert.equal(firstByte(b.pop()), 1);
    assert.equal(firstByte(b.pop()), 2);
    const gap = b.pop();
    assert.deepEqual([gap?.concealed, firstByte(gap)], [true, 0xff]);
    assert.equal(b.push(320, frame(3)), 'late');
    assert.equal(firstByte(b.pop()), 4);
    assert.deepEqual({ late: b.stats.late, duplicates: b.stats.duplicates, concealed: b.stats.concealedFrames }, { late: 1, duplicates: 1, concealed: 1 });
  });

  it('plays silence without moving on when it runs dry, so a stall costs no audio', () => {
    const b = jb();
    b.push(0, frame(1));
    b.push(160, frame(2));
    assert.deepEqual([firstByte(b.pop()), firstByte(b.pop())], [1, 2]);
    const dry = [b.pop(), b.pop()];
    assert.deepEqual(dry.map((f) => f?.missing), [160, 160]);
    for (const [i, ts] of [320, 480, 640].entries()) assert.equal(b.push(ts, frame(3 + i)), 'accepted', 'not late after the stall');
    assert.deepEqual([b.pop(), b.pop(), b.pop()].map(firstByte), [3, 4, 5]);
    assert.equal(b.stats.late, 0);
  });

  it('skips the gap of a pause in sending (silence suppression) instead of replaying it', () => {
    const b = jb();
    b.push(0, frame(1));
    b.push(160, frame(2));
    b.pop();
    b.pop();
    b.pop(); // dry
    b.push(8000, frame(7)); // one second later
    b.push(8160, frame(8));
    assert.deepEqual([b.pop(), b.pop()].map(firstByte), [7, 8]);
  });

  it('cuts 30 ms packets into 20 ms frames and follows the timestamp across 2^32', () => {
    const b = jb();
    const start = 2 ** 32 - 240;
    b.push(start, frame(7, 240));
    b.push((start + 240) >>> 0, frame(8, 240));
    assert.deepEqual([b.pop(), b.pop(), b.pop()].map((f) => [f?.payload[0], f?.payload[159], f?.concealed]), [[7, 7, false], [7, 8, false], [8, 8, false]]);
  });

  it('starts over when the timestamps jump, and stays bounded', () => {
    const b = new JitterBuffer({ depthMs: 40, silence: 0xd5, capacityMs: 200 });
    b.push(0, frame(1));
    b.push(160, frame(2));
    b.push(10_000_000, frame(9)); // far ahead: the far end restarted
    assert.equal(b.stats.resets, 1);
    assert.ok(b.buffered <= 160);
    for (let i = 0; i < 1000; i++) b.push(10_000_000 + i * 160, frame(i & 0xff));
    assert.ok(b.buffered <= 200 * 8, `buffered ${b.buffered}`);
  });

  it('lets a burst drain, but trims latency that stays high for half a second', () => {
    const burst = jb();
    for (let i = 0; i < 10; i++) burst.push(i * 160, frame(i));
    const played = Array.from({ length: 10 }, () => firstByte(burst.pop()));
    assert.deepEqual(played, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 'nothing lost to a one-off burst');
    const steady = jb();
    let ts = 0;
    for (; ts < 10 * 160; ts += 160) steady.push(ts, frame(1));
    for (let i = 0; i < 100; i++, ts += 160) {
      steady.push(ts, frame(1));
      steady.pop();
    }
    assert.ok(steady.stats.skippedFrames >= 3, `skipped ${steady.stats.skippedFrames}`);
    assert.ok(steady.buffered < 10 * 160, 'latency came down');
  });
});

describe('receiver statistics (RFC 3550 A.1, A.3, A.8)', () => {
  it('counts loss across a sequence wrap, and the fraction per report', () => {
    const s = new ReceiveStats();
    let seq = 65530;
    for (let i = 0; i < 20; i++) {
      if (i !== 7 && i !== 8) s.update(seq & 0xffff, i * 160, i * 20);
      seq += 1;
    }
    assert.deepEqual([s.expected, s.received, s.lost], [20, 18, 2]);
    assert.equal(s.extendedHighest, 65530 + 19);
    assert.equal(s.takeFractionLost(), Math.floor((2 * 256) / 20));
    assert.equal(s.takeFractionLost(), 0, 'nothing new since');
  });

  it('measures interarrival jitter in timestamp units', () => {
    const s = new ReceiveStats();
    for (let i = 0; i < 200; i++) s.update(i, i * 160, i * 20 + (i % 2 ? 10 : 0));
    // Transit alternates by 10 ms = 80 units; the estimate converges on that.
    assert.ok(s.jitter > 70 && s.jitter <= 80, `jitter ${s.jitter}`);
    assert.ok(Math.abs(s.jitterMs - s.jitter / 8) < 1e-9);
  });

  it('does not believe one wild sequence number, but follows two in a row', () => {
    const s = new ReceiveStats();
    s.update(100, 0, 0);
    assert.equal(s.update(40_000, 160, 20), false);
    assert.equal(s.update(40_001, 320, 40), true);
    assert.equal(s.expected, 1);
  });
});

describe('RFC 4733 telephone-events', () => {
  it('builds a key press as updates every 20 ms and three end packets', () => {
    const packets = dtmfPackets('#', 100);
    assert.deepEqual(packets.map((p) => [p.event, p.end, p.duration]), [
      [11, false, 160], [11, false, 320], [11, false, 480], [11, false, 640], [11, true, 800], [11, true, 800], [11, true, 800],
    ]);
    assert.deepEqual(parseDtmfPayload(buildDtmfPayload({ event: 5, end: true, volume: 10, duration: 800 })), { event: 5, end: true, volume: 10, duration: 800 });
    assert.throws(() => dtmfPackets('x', 100), TypeError);
  });

  it('turns a stream of packets into one digit per key press', () => {
    const r = new DtmfReceiver();
    const digits: string[] = [];
    for (const [ts, event] of [[1000, 1], [2000, 9]] as const) {
      for (const p of dtmfPackets(event === 1 ? '1' : '9', 100)) {
        const d = r.push(ts, buildDtmfPayload(p));
        if (d) digits.push(d.digit);
      }
    }
    assert.deepEqual(digits, ['1', '9']);
    assert.throws(() => r.push(3000, Buffer.alloc(2)), RtpParseError);
  });
});

describe('RTP and RTCP packets', () => {
  it('round-trips an RTP packet through werift-rtp', () => {
    const wire = buildRtp({ payloadType: 0, sequenceNumber: 65535, timestamp: 2 ** 32 - 1, ssrc: 0xdeadbeef, marker: true }, frame(0x55));
    const p = parseRtp(wire);
    assert.deepEqual([p.payloadType, p.sequenceNumber, p.timestamp, p.ssrc, p.marker, p.payload.length], [0, 65535, 2 ** 32 - 1, 0xdeadbeef, true, 160]);
  });

  it('refuses short, wrong-version and inconsistent packets with RtpParseError', () => {
    const good = buildRtp({ payloadType: 0, sequenceNumber: 1, timestamp: 1, ssrc: 1, marker: false }, frame(1, 4));
    const bad = [Buffer.alloc(4), Buffer.from([0x40, ...good.subarray(1)]), Buffer.from([0x8f, ...good.subarray(1)]), Buffer.from([0xa0, ...good.subarray(1, -1), 200])];
    for (const b of bad) assert.throws(() => parseRtp(b), RtpParseError);
  });

  it('builds SR + SDES, reads it back with a negative loss count, and reads BYE', () => {
    const ntp = ntpFromMs(Date.UTC(2026, 0, 1));
    const wire = buildReport({
      ssrc: 1, cname: 'parley', sender: { ntpTimestamp: ntp, rtpTimestamp: 160, packetCount: 3, octetCount: 480 },
      block: { ssrc: 2, fractionLost: 25, packetsLost: -2, highestSequence: 70_000, jitter: 12, lsr: ntpMiddle(ntp), dlsr: 65536 },
    });
    const parsed = parseRtcp(Buffer.concat([wire, buildBye(2)]));
    assert.equal(parsed.reports.length, 1);
    assert.deepEqual(parsed.reports[0]?.sender, { ntpTimestamp: ntp, rtpTimestamp: 160, packetCount: 3, octetCount: 480 });
    assert.deepEqual(parsed.reports[0]?.reports[0], { ssrc: 2, fractionLost: 25, packetsLost: -2, highestSequence: 70_000, jitter: 12, lsr: ntpMiddle(ntp), dlsr: 65536 });
    assert.deepEqual(parsed.byes, [2]);
    assert.throws(() => parseRtcp(wire.subarray(0, 30)), RtpParseError);
  });
});

describe('RTP port pool', () => {
  it('reads PARLEY_RTP_PORTS, and refuses nonsense', () => {
    assert.deepEqual(parsePortRange('40000-40999'), { min: 40000, max: 40999 });
    for (const bad of ['40000', '10-20', '50000-40000', 'a-b', '40000-70000']) assert.throws(() => parsePortRange(bad), RangeError);
  });

  const IGNORE = { packet: () => undefined, error: () => undefined };

  it('never gives one port pair twice, skips ports others hold, and takes released ones back', async () => {
    const squatter = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => squatter.bind(20502, '127.0.0.1', resolve));
    const pool = new RtpPortPool({ min: 20500, max: 20505 }, '127.0.0.1');
    const leases = [];
    try {
      leases.push(await pool.allocate(IGNORE), await pool.allocate(IGNORE));
      assert.deepEqual(leases.map((l) => l.port).sort(), [20500, 20504], '20502 is taken by someone else');
      await assert.rejects(pool.allocate(IGNORE), RtpPortsExhaustedError);
      leases[0]?.release();
      leases.push(await pool.allocate(IGNORE));
      assert.equal(leases[2]?.port, leases[0]?.port, 'the one pair freed');
      assert.equal(pool.inUse, 2);
    } finally {
      for (const l of leases) l.release();
      squatter.close();
      await pool.close();
    }
    assert.equal(pool.inUse, 0);
  });
});

describe('RTP port choice', () => {
  it('2: is not sequential: the next call\'s port cannot be told from the last one\'s', async () => {
    const pool = new RtpPortPool({ min: 20700, max: 20899 }, '127.0.0.1');
    const leases = [];
    try {
      for (let i = 0; i < 20; i++) leases.push(await pool.allocate({ packet: () => undefined, error: () => undefined }));
      const ports = leases.map((l) => l.port);
      assert.ok(ports.every((p) => p % 2 === 0 && p >= 20700 && p <= 20898));
      const steps = ports.slice(1).map((p, i) => p - (ports[i] ?? 0));
      // In sequence every step would be 2; at random among 100 pairs hardly any is.
      assert.ok(steps.filter((d) => d === 2).length < 10, `steps ${steps.join(', ')}`);
      assert.notDeepEqual(ports, Array.from({ length: 20 }, (_, i) => 20700 + 2 * i));
    } finally {
      for (const l of leases) l.release();
      await pool.close();
    }
  });
});

describe('pacer', () => {
  it('ticks on a fixed grid: tick n runs at start + n * interval or later, in order, none lost or early', async () => {
    const ticks: Array<{ index: number; at: number }> = [];
    let started = 0;
    let pacer!: Pacer;
    await within(new Promise<void>((resolve) => {
      pacer = new Pacer(10, ({ index }) => {
        ticks.push({ index, at: performance.now() });
        if (index >= 10) {
          pacer.stop();
          resolve();
        }
      });
      started = performance.now();
      pacer.start();
    }), 5000, 'ten ticks');
    // A loaded machine may hold the loop for more than 10 intervals: those ticks are counted as skipped.
    assert.equal(ticks.length + pacer.skipped, ticks.at(-1)?.index);
    ticks.forEach((t, i) => {
      assert.ok(i === 0 || t.index > (ticks[i - 1]?.index ?? 0), 'in order');
      assert.ok(t.at - started >= t.index * 10 - 1, `tick ${t.index} early`);
    });
  });
});
