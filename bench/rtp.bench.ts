/**
 * RTP media at call scale: 100 concurrent calls on loopback (200 RtpSessions, each pair
 * sending 20 ms PCMU frames both ways, with jitter buffer playout and RTCP) for 20 s, all
 * senders paced by one drift-corrected 20 ms timer. Against a bare baseline in the same run:
 * 200 plain dgram sockets sending the same bytes on the same timer, receiving with the same
 * RFC 3550 loss and jitter arithmetic but no parsing, latching, buffering or RTCP. The two
 * alternate in 5 s rounds, so load from other processes falls on both alike.
 * Prints send lateness p50/p99/max, receive jitter, packet loss, CPU and RSS for both.
 *   targets: no loss on loopback, p99 send lateness within 5 ms of bare, CPU < 4 x bare.
 * Run: npm run bench -- bench/rtp.bench.ts   (PARLEY_BENCH_SECONDS=5 for a quick look)
 */
import dgram from 'node:dgram';
import { cpus, loadavg } from 'node:os';
import { Pacer } from '../src/sip/rtp/pacer.ts';
import { RtpPortPool } from '../src/sip/rtp/ports.ts';
import { ReceiveStats } from '../src/sip/rtp/receive-stats.ts';
import { RtpSession } from '../src/sip/rtp/session.ts';
import { buildRtp } from '../src/sip/rtp/packet.ts';

const CALLS = Number(process.env.PARLEY_BENCH_CALLS ?? 100);
const TOTAL_SECONDS = Number(process.env.PARLEY_BENCH_SECONDS ?? 20);
const ROUND_SECONDS = Math.min(5, TOTAL_SECONDS);
const ROUNDS = Math.max(1, Math.round(TOTAL_SECONDS / ROUND_SECONDS));
const SECONDS = ROUND_SECONDS;
const FRAME = Buffer.alloc(160, 0xff);

interface RunResult {
  lateness: Float64Array;
  sent: number;
  received: number;
  lost: number;
  jitterMs: number[];
  cpuMs: number;
  rssMb: number;
  skippedTicks: number;
  /** Parley's side: how late the media thread put frames on the wire (p99 of each round). */
  wireP99?: number[];
}

/** Runs `tick` on one shared pacer for SECONDS and measures the process meanwhile. */
async function measure(tick: (due: number, samples: Float64Array, at: { n: number }) => void): Promise<{ lateness: Float64Array; cpuMs: number; rssMb: number; skipped: number }> {
  const ticks = Math.round((SECONDS * 1000) / 20);
  const lateness = new Float64Array(ticks * CALLS * 2);
  const at = { n: 0 };
  let peakRss = 0;
  const cpu = process.cpuUsage();
  let pacer!: Pacer;
  await new Promise<void>((resolve) => {
    let start = 0;
    pacer = new Pacer(20, ({ index }) => {
      tick(start + index * 20, lateness, at);
      if (index % 50 === 0) peakRss = Math.max(peakRss, process.memoryUsage().rss);
      if (index >= ticks) {
        pacer.stop();
        resolve();
      }
    });
    start = performance.now();
    pacer.start();
  });
  const used = process.cpuUsage(cpu);
  return { lateness: lateness.subarray(0, at.n), cpuMs: (used.user + used.system) / 1000, rssMb: peakRss / 2 ** 20, skipped: pacer.skipped };
}

async function bare(): Promise<RunResult> {
  const socks: dgram.Socket[] = [];
  const stats: ReceiveStats[] = [];
  let received = 0;
  for (let i = 0; i < CALLS * 2; i++) {
    const sock = dgram.createSocket('udp4');
    const s = new ReceiveStats();
    sock.on('message', (buf) => {
      received += 1;
      s.update(buf.readUInt16BE(2), buf.readUInt32BE(4), performance.now());
    });
    await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', resolve));
    socks.push(sock);
    stats.push(s);
  }
  const packets = socks.map((_, i) => buildRtp({ payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: i + 1, marker: false }, FRAME));
  const ports = socks.map((s) => s.address().port);
  let seq = 0;
  const m = await measure((due, lateness, at) => {
    seq += 1;
    for (let i = 0; i < socks.length; i++) {
      const packet = packets[i] as Buffer;
      packet.writeUInt16BE(seq & 0xffff, 2);
      packet.writeUInt32BE((seq * 160) >>> 0, 4);
      (socks[i] as dgram.Socket).send(packet, ports[i ^ 1] as number, '127.0.0.1');
      lateness[at.n++] = performance.now() - due;
    }
  });
  await new Promise((r) => setTimeout(r, 200));
  for (const s of socks) s.close();
  return { ...m, sent: m.lateness.length, received, lost: stats.reduce((a, s) => a + Math.max(0, s.lost), 0), jitterMs: stats.map((s) => s.jitterMs), skippedTicks: m.skipped };
}

async function parley(): Promise<RunResult> {
  const pool = new RtpPortPool({ min: 22000, max: 22999 }, '127.0.0.1');
  const sessions: RtpSession[] = [];
  let played = 0;
  for (let i = 0; i < CALLS * 2; i++) {
    const s = await RtpSession.open({ pool, jitterDepthMs: 60 });
    s.on('audio', () => (played += 1));
    sessions.push(s);
  }
  sessions.forEach((s, i) => {
    const peer = sessions[i ^ 1] as RtpSession;
    s.setRemote({ remoteAddress: '127.0.0.1', remotePort: peer.localPort, codec: 'PCMU', payloadType: 0, dtmfPayloadType: 101 });
  });
  const m = await measure((due, lateness, at) => {
    for (const s of sessions) {
      s.send(FRAME);
      lateness[at.n++] = performance.now() - due;
    }
  });
  await new Promise((r) => setTimeout(r, 200));
  const stats = sessions.map((s) => s.stats());
  const wire = pool.stats();
  for (const s of sessions) s.close();
  await pool.close();
  void played;
  return {
    ...m,
    wireP99: [wire.p99Ms],
    sent: stats.reduce((a, s) => a + s.packetsSent, 0),
    received: stats.reduce((a, s) => a + s.packetsReceived, 0),
    lost: stats.reduce((a, s) => a + s.packetsLost, 0),
    jitterMs: stats.map((s) => s.jitterMs),
    skippedTicks: m.skipped,
  };
}

function quantiles(values: Float64Array | number[]): { p50: number; p99: number; max: number } {
  const sorted = Float64Array.from(values).sort();
  const at = (q: number): number => sorted[Math.floor(q * (sorted.length - 1))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? NaN };
}

function merge(runs: RunResult[]): RunResult {
  const lateness = new Float64Array(runs.reduce((n, r) => n + r.lateness.length, 0));
  let at = 0;
  for (const r of runs) {
    lateness.set(r.lateness, at);
    at += r.lateness.length;
  }
  const sum = (f: (r: RunResult) => number): number => runs.reduce((n, r) => n + f(r), 0);
  return {
    lateness,
    sent: sum((r) => r.sent),
    received: sum((r) => r.received),
    lost: sum((r) => r.lost),
    jitterMs: runs.flatMap((r) => r.jitterMs),
    cpuMs: sum((r) => r.cpuMs),
    rssMb: Math.max(...runs.map((r) => r.rssMb)),
    skippedTicks: sum((r) => r.skippedTicks),
    wireP99: runs.flatMap((r) => r.wireP99 ?? []),
  };
}

function report(label: string, r: RunResult): { p99: number; cpuMs: number; lost: number } {
  const seconds = ROUNDS * ROUND_SECONDS;
  const late = quantiles(r.lateness);
  const jitter = quantiles(r.jitterMs);
  console.log(`  ${label}`);
  if (r.wireP99?.length) console.log(`    on the wire     p99 ${r.wireP99.map((v) => v.toFixed(1)).join(', ')} ms per round (the media thread sends each frame 20 ms after the one before; this bench hands each over at its tick)`);
  console.log(`    send lateness   p50 ${late.p50.toFixed(3)} ms   p99 ${late.p99.toFixed(3)} ms   max ${late.max.toFixed(3)} ms   (${r.lateness.length} sends, ${r.skippedTicks} ticks skipped)`);
  console.log(`    receive jitter  p50 ${jitter.p50.toFixed(3)} ms   p99 ${jitter.p99.toFixed(3)} ms   (RFC 3550, per stream)`);
  console.log(`    packets         sent ${r.sent}   received ${r.received}   lost ${r.lost} (${((r.lost / Math.max(1, r.sent)) * 100).toFixed(3)} %)`);
  console.log(`    process         CPU ${(r.cpuMs / 1000).toFixed(2)} s over ${seconds} s (${((r.cpuMs / (seconds * 1000)) * 100).toFixed(1)} % of one core)   peak RSS ${r.rssMb.toFixed(0)} MB`);
  return { p99: late.p99, cpuMs: r.cpuMs, lost: r.lost };
}

async function main(): Promise<void> {
  console.log(`RTP benchmark: ${CALLS} calls (${CALLS * 2} streams of 20 ms PCMU, both ways) on loopback, one 20 ms pacer, ${ROUNDS} x ${ROUND_SECONDS} s for each side, alternating`);
  const bareRuns: RunResult[] = [];
  const ourRuns: RunResult[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    bareRuns.push(await bare());
    ourRuns.push(await parley());
  }
  const base = report('bare dgram sockets, same bytes', merge(bareRuns));
  const ours = report('Parley RtpSession (werift-rtp packets, latching, jitter buffer playout, RTCP)', merge(ourRuns));
  const cpuRatio = ours.cpuMs / base.cpuMs;
  console.log(`  CPU ${cpuRatio.toFixed(2)} x bare; p99 send lateness ${ours.p99.toFixed(3)} ms vs ${base.p99.toFixed(3)} ms bare (load average ${loadavg()[0]?.toFixed(1)} on ${cpus().length} cores)`);
  const ok = ours.lost === 0 && ours.p99 <= base.p99 + 5 && cpuRatio < 4;
  console.log(ok ? '  all targets met' : '  TARGET MISSED (no loss, p99 within 5 ms of bare, CPU < 4 x bare)');
}

await main();
