/**
 * The recorder's own cost on the main thread, per 20 ms frame pair (the caller's and the
 * assistant's), as a SIP call makes it: mu-law 8 kHz both ways, on a timed link driven by a
 * manual clock, for RECORDER_BENCH_CALLS calls (100) of RECORDER_BENCH_SECONDS (120) each,
 * interleaved frame by frame as the calls run together. Each recording is sealed in 64 KiB
 * chunks as the spool does (AES-256-GCM; the file write is left out: it runs on libuv's thread
 * pool). The baseline, in the same run: the same frames through the same timed links with no
 * recorder. Prints CPU per call and second of audio, the time the collector paused the thread
 * (its count and longest pause), and the ratio to the baseline.
 * Run: npm run bench -- bench/recorder.bench.ts
 */
import { randomBytes } from 'node:crypto';
import { PerformanceObserver } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import alawmulaw from 'alawmulaw';
import { CallAudioRecorder, type RecordingSink } from '../src/calls/recording/recorder.ts';
import type { AudioLink } from '../src/calls/voice/link.ts';
import { timedLink, type TimedLink } from '../src/calls/voice/timeline.ts';
import { sealChunkParts, streamHeader } from '../src/crypto/chunked-cipher.ts';
import { ManualPacerClock } from '../src/voice/pacer-clock.ts';

const CALLS = Number(process.env.RECORDER_BENCH_CALLS ?? 100);
const SECONDS = Number(process.env.RECORDER_BENCH_SECONDS ?? 120);
const CHUNK = 64 * 1024;
// A full collection before each run, so that no run pays for the garbage of the one before.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

/** A sink that copies what it is given into a 64 KiB chunk and seals each as it fills, as the spool writer does, then drops it. */
function sealingSink(): RecordingSink {
  const key = randomBytes(32);
  const header = streamHeader(CHUNK);
  const plain = Buffer.allocUnsafe(CHUNK);
  let filled = 0;
  let index = 0;
  const seal = (last: boolean) => {
    sealChunkParts(key, header, index++, plain.subarray(0, filled), last);
    filled = 0;
  };
  return {
    write(pcm) {
      for (let from = 0; from < pcm.length;) {
        const n = Math.min(pcm.length - from, CHUNK - filled);
        pcm.copy(plain, filled, from, from + n);
        filled += n;
        from += n;
        if (filled === CHUNK) seal(false);
      }
    },
    async finish() {
      seal(true);
    },
  };
}

interface Run {
  cpuMsPerCallSecond: number;
  gcMs: number;
  gcCount: number;
  gcMaxMs: number;
  gcMajor: number;
}

async function run(recording: boolean): Promise<Run> {
  const clock = new ManualPacerClock(0);
  const callers: ((chunk: Buffer) => void)[] = [];
  const links: TimedLink[] = [];
  const recorders: CallAudioRecorder[] = [];
  for (let i = 0; i < CALLS; i++) {
    const link: AudioLink = { format: { encoding: 'mulaw', sampleRate: 8000 }, lead: 20, sendFrame: () => {}, flushPeer: () => {}, onAudio: (l) => void callers.push(l) };
    const timed = timedLink(link, clock);
    if (recording) {
      const recorder = new CallAudioRecorder(timed.format, timed.timeline, sealingSink());
      timed.tap(recorder);
      recorders.push(recorder);
    }
    links.push(timed);
  }
  // Speech-like frames (a different one each time, so nothing is cached): the caller's and the assistant's.
  const frames = Array.from({ length: 64 }, (_, k) => Buffer.from(alawmulaw.mulaw.encode(Int16Array.from({ length: 160 }, (_, i) => Math.round(6000 * Math.sin((i + k * 160) / (5 + k % 7)))))));
  collect();
  const gc = { ms: 0, count: 0, max: 0, major: 0 };
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gc.ms += entry.duration;
      gc.count++;
      gc.max = Math.max(gc.max, entry.duration);
      if (process.env.RECORDER_BENCH_PAUSES) console.log(`    pause ${entry.duration.toFixed(1)} ms, kind ${(entry as { detail?: { kind?: number } }).detail?.kind}`);
      if ((entry as { detail?: { kind?: number } }).detail?.kind !== 1) gc.major++; // 1: a scavenge of the young generation
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  const cpu = process.cpuUsage();
  for (let f = 0; f < SECONDS * 50; f++) {
    clock.advance(20);
    for (let c = 0; c < CALLS; c++) {
      callers[c]!(frames[(f + c) % 64]!);
      links[c]!.sendFrame(frames[(f + c + 32) % 64]!, false);
    }
    // Let the collector and the observer run as they would between the event loop's turns.
    if (f % 50 === 0) await new Promise((r) => setImmediate(r));
  }
  for (const recorder of recorders) await recorder.close();
  const used = process.cpuUsage(cpu);
  await new Promise((r) => setTimeout(r, 50));
  observer.disconnect();
  return { cpuMsPerCallSecond: (used.user + used.system) / 1000 / CALLS / SECONDS, gcMs: gc.ms, gcCount: gc.count, gcMaxMs: gc.max, gcMajor: gc.major };
}

await run(true); // warm-up: the JIT, the collector's heap sizes
const plain = await run(false);
const recorded = await run(true);
console.log(`recorder: ${CALLS} calls of ${SECONDS} s, mu-law 8 kHz both ways, frames handed in as calls run together; sealing in 64 KiB chunks, no file writes`);
for (const [label, r] of [['not recorded', plain], ['recorded', recorded]] as const) {
  console.log(`  ${label.padEnd(13)} CPU ${r.cpuMsPerCallSecond.toFixed(3)} ms per call and second; collector ${r.gcMs.toFixed(0)} ms in ${r.gcCount} pauses (${r.gcMajor} not scavenges), longest ${r.gcMaxMs.toFixed(1)} ms`);
}
console.log(`  the recorder's own CPU: ${(recorded.cpuMsPerCallSecond - plain.cpuMsPerCallSecond).toFixed(3)} ms per call and second (x${(recorded.cpuMsPerCallSecond / plain.cpuMsPerCallSecond).toFixed(2)} the timed link alone)`);
