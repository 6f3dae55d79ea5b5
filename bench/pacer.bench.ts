/**
 * Audio pacing under load: 50 and 100 concurrent outputs of 20 ms frames for 20 s each, on the
 * real clock, against a bare baseline measured in the same run: one setInterval(20) doing
 * nothing but recording how late each callback fires after the previous one plus 20 ms (its
 * own promise; measured against the ideal grid it would also show its drift, printed apart).
 * Prints lateness p50/p99/max and CPU per frame (per tick for the baseline).
 * Run: npm run bench -- bench/pacer.bench.ts   (PACER_BENCH_SECONDS to shorten it)
 */
import { LatenessHistogram, type LatenessStats } from '../src/voice/lateness.ts';
import { systemPacerClock } from '../src/voice/pacer-clock.ts';
import { Pacer } from '../src/voice/pacer.ts';

const SECONDS = Number(process.env.PACER_BENCH_SECONDS ?? 20);
const FRAME_MS = 20;

interface Result extends LatenessStats {
  label: string;
  cpuUsPerFrame: number;
}

function cpuMicros(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return used.user + used.system;
}

let baselineDriftMs = 0;

async function baseline(): Promise<Result> {
  const histogram = new LatenessHistogram();
  const start = performance.now();
  let previous = start;
  const cpu = process.cpuUsage();
  let ticks = 0;
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      ticks++;
      const now = performance.now();
      histogram.record(now - (previous + FRAME_MS));
      previous = now;
      baselineDriftMs = now - (start + ticks * FRAME_MS);
      if (ticks * FRAME_MS >= SECONDS * 1000) {
        clearInterval(timer);
        resolve();
      }
    }, FRAME_MS);
  });
  return { label: 'bare setInterval', ...histogram.stats(), cpuUsPerFrame: cpuMicros(cpu) / ticks };
}

async function paced(outputs: number): Promise<Result> {
  const pacer = new Pacer(systemPacerClock);
  const framesEach = (SECONDS * 1000) / FRAME_MS;
  const frame = new Uint8Array(320); // 20 ms of 8 kHz PCM16; one buffer reused, as a transport would send views
  let sent = 0;
  let checksum = 0;
  let cpu = process.cpuUsage();
  let sentAtReset = 0;
  await new Promise<void>((resolve) => {
    let finished = 0;
    for (let o = 0; o < outputs; o++) {
      let own = 0;
      const output = pacer.createOutput<Uint8Array>({
        lead: o % 2 === 0 ? 0 : 3, // RTP-like and buffering WebSocket clients
        send: (f) => {
          checksum += f[0] as number;
          sent++;
          if (++own === framesEach) {
            output.close();
            if (++finished === outputs) resolve();
          }
        },
      });
      for (let i = 0; i < framesEach; i++) output.enqueue(frame, i < framesEach / 2 ? 'first' : 'second');
    }
    // Queueing 1,000 frames per output blocks the loop for a while; what fell due meanwhile is
    // the setup's doing, so measuring starts half a second in.
    setTimeout(() => {
      pacer.resetStats();
      cpu = process.cpuUsage();
      sentAtReset = sent;
    }, 500);
  });
  if (checksum !== 0) throw new Error('unexpected frame content');
  return { label: `pacer, ${outputs} outputs`, ...pacer.stats(), cpuUsPerFrame: cpuMicros(cpu) / (sent - sentAtReset) };
}

const results = [await baseline(), await paced(50), await paced(100)];
const base = results[0] as Result;
console.log(`pacer bench: ${SECONDS} s per run, ${FRAME_MS} ms frames; pacer lateness against the ideal grid`);
console.log('run                      frames   p50 ms  p99 ms  max ms  cpu µs/frame  p99 vs bare');
for (const r of results) {
  const ratio = base.p99Ms > 0 ? (r.p99Ms / base.p99Ms).toFixed(2) : '-';
  console.log(`${r.label.padEnd(24)} ${String(r.frames).padStart(6)}  ${r.p50Ms.toFixed(1).padStart(6)}  ${r.p99Ms.toFixed(1).padStart(6)}  ${r.maxMs.toFixed(1).padStart(6)}  ${r.cpuUsPerFrame.toFixed(2).padStart(12)}  ${ratio.padStart(10)}`);
}
console.log(`bare setInterval drifted ${baselineDriftMs.toFixed(1)} ms behind the ideal grid in ${SECONDS} s (the pacer does not drift)`);
