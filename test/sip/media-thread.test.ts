// The RTP media thread: frames handed over at once go out on a 20 ms cadence, a flush drops
// what is queued, drained() waits for the last frame, and the figures count what went out.
// Timing is only ever asserted as a lower bound (the thread can never send early), so a slow
// machine cannot fail these.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { after, describe, it } from 'node:test';
import { parseRtp } from '../../src/sip/rtp/packet.ts';
import { RtpPortPool } from '../../src/sip/rtp/ports.ts';
import { RtpSession } from '../../src/sip/rtp/session.ts';
import { until } from '../helpers/until.ts';

/** Milliseconds on a clock every thread shares. */
const wallNow = (): number => performance.timeOrigin + performance.now();

async function phone() {
  const sock = dgram.createSocket('udp4');
  const got: { payload: Buffer; marker: boolean; at: number }[] = [];
  sock.on('message', (buf) => {
    const p = parseRtp(buf);
    got.push({ payload: Buffer.from(p.payload), marker: p.marker, at: wallNow() });
  });
  await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', resolve));
  return { sock, port: sock.address().port, got };
}

describe('RTP media thread', () => {
  const pool = new RtpPortPool({ min: 20650, max: 20669 }, '127.0.0.1');
  after(() => pool.close());

  async function call() {
    const far = await phone();
    const session = await RtpSession.open({ pool, rtcpIntervalMs: 60_000 });
    session.setRemote({ remoteAddress: '127.0.0.1', remotePort: far.port, remoteRtcpPort: far.port, codec: 'PCMU', payloadType: 0, dtmfPayloadType: null });
    const done = () => {
      session.close();
      far.sock.close();
    };
    return { far, session, done };
  }

  it('sends frames handed over at once 20 ms apart, in order, the first marked', async () => {
    const { far, session, done } = await call();
    try {
      const handedOver = wallNow();
      for (let i = 0; i < 10; i++) assert.equal(session.send(Buffer.alloc(160, i), { startsRun: i === 0 }), true);
      await until('10 frames at the phone', () => far.got.length, (n) => n >= 10, 10_000, 5);
      assert.deepEqual(far.got.map((p) => p.payload[0]), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      assert.deepEqual(far.got.map((p) => p.marker), [true, false, false, false, false, false, false, false, false, false]);
      // The tenth frame is due 180 ms after the first, which went no earlier than the hand-over.
      assert.ok((far.got[9]?.at ?? 0) - handedOver >= 179, `the tenth frame came ${((far.got[9]?.at ?? 0) - handedOver).toFixed(1)} ms after the hand-over`);
    } finally {
      done();
    }
  });

  it('drops what is queued on a flush, and a new talkspurt goes out at once', async () => {
    const { far, session, done } = await call();
    try {
      for (let i = 0; i < 250; i++) session.send(Buffer.alloc(160, 1), { startsRun: i === 0 }); // 5 s of audio
      await until('the first frame', () => far.got.length, (n) => n >= 1, 10_000, 5);
      session.flush();
      session.send(Buffer.alloc(160, 2), { startsRun: true });
      await until('the new talkspurt', () => far.got.some((p) => p.payload[0] === 2), (seen) => seen, 10_000, 5);
      const before = far.got.findIndex((p) => p.payload[0] === 2);
      assert.ok(before < 250, `${before} frames of the flushed talkspurt went out`);
      assert.equal(far.got[before]?.marker, true);
    } finally {
      done();
    }
  });

  it('drained() waits for the last frame handed over', async () => {
    const { far, session, done } = await call();
    try {
      const handedOver = wallNow();
      for (let i = 0; i < 5; i++) session.send(Buffer.alloc(160, i), { startsRun: i === 0 });
      await session.drained();
      assert.ok(wallNow() - handedOver >= 79, 'the fifth frame is due 80 ms after the first');
      await until('5 frames at the phone', () => far.got.length, (n) => n >= 5, 10_000, 5);
      const stats = pool.stats();
      assert.ok(stats.frames >= 4, `frames after the first of a talkspurt are timed: ${stats.frames}`);
      assert.equal(stats.lateHandovers, 0, 'every frame was handed over before its time');
    } finally {
      done();
    }
  });

  it('gives the ports back once the session closes', async () => {
    const { session, done } = await call();
    const port = session.localPort;
    done();
    await until('the port pair back', () => pool.inUse, (n) => n === 0, 10_000, 5);
    // Bindable again by anyone once the media thread has closed both sockets.
    const bindable = () => new Promise<boolean>((resolve) => {
      const probe = dgram.createSocket('udp4');
      probe.once('error', () => {
        probe.close();
        resolve(false);
      });
      probe.bind({ port, address: '127.0.0.1', exclusive: true }, () => probe.close(() => resolve(true)));
    });
    await until(`port ${port} free`, bindable, (ok) => ok, 10_000, 20);
  });
});
