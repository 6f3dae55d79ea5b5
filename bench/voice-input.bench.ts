/**
 * The cost of the voice input path per 20 ms frame: mu-law 8 kHz (a Twilio or SIP call) decoded,
 * resampled to 16 kHz and run through Silero VAD, for 50 streams side by side, as fast as the
 * machine goes. Against a bare baseline in the same run: the same frames of the same streams,
 * only copied. Speech (espeak-ng) and silence alternate, as in a call.
 *   figures: CPU per frame (process.cpuUsage, so work on onnxruntime's threads counts too), the
 *   share of one core that 50 live streams would take, Silero's cost per 512-sample window.
 * Run: npm run bench -- bench/voice-input.bench.ts
 */
import { createDecoder, createEncoder, type AudioDecoder } from '../src/voice/audio/format.ts';
import { concatSamples } from '../src/voice/audio/pcm.ts';
import { loadSileroModel } from '../src/voice/vad-model.ts';
import { createVad, vadSettings, type Vad } from '../src/voice/vad.ts';
import { silence, speech } from '../test/voice/support/speech.ts';

const STREAMS = Number(process.env.PARLEY_BENCH_STREAMS ?? 50);
const SECONDS = Number(process.env.PARLEY_BENCH_SECONDS ?? 6);
const FRAME_BYTES = 160; // 20 ms of mu-law at 8 kHz
const FRAME_MS = 20;

interface Stream {
  decoder: AudioDecoder;
  vad: Vad;
  offset: number; // streams start at different places of the audio, as calls do
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

async function timed(label: string, frames: number, work: () => Promise<void>): Promise<number> {
  const cpu = process.cpuUsage();
  const wall = performance.now();
  await work();
  const wallMs = performance.now() - wall;
  const perFrameUs = (cpuMs(cpu) * 1000) / frames;
  console.log(`  ${label.padEnd(44)} ${perFrameUs.toFixed(2).padStart(9)} us CPU/frame   wall ${wallMs.toFixed(0).padStart(6)} ms`);
  return perFrameUs;
}

async function main() {
  const model = await loadSileroModel();
  const talk = await speech('Hello, I am calling about my order. It has not arrived yet, and I would like to know where it is.');
  const call16k = concatSamples([silence(1), talk, silence(1.5), talk, silence(1)]);
  const wire = createEncoder(16000, { encoding: 'mulaw', sampleRate: 8000 }).encode(call16k);
  const framesPerStream = Math.floor((SECONDS * 1000) / FRAME_MS);
  const total = framesPerStream * STREAMS;
  const frameAt = (stream: Stream, i: number) => {
    const at = ((stream.offset + i) * FRAME_BYTES) % (wire.length - FRAME_BYTES);
    return wire.subarray(at, at + FRAME_BYTES);
  };
  const makeStreams = () =>
    Array.from({ length: STREAMS }, (_, n): Stream => ({
      decoder: createDecoder({ encoding: 'mulaw', sampleRate: 8000 }, 16000),
      vad: createVad(model, vadSettings()),
      offset: n * 37,
    }));

  // Warm-up: JIT and onnxruntime's first runs.
  const warm = makeStreams().slice(0, 4);
  for (let i = 0; i < 200; i++) for (const s of warm) await s.vad.push(s.decoder.decode(frameAt(s, i)));

  console.log(`\nVoice input, ${STREAMS} streams x ${framesPerStream} frames of 20 ms (mu-law 8 kHz -> PCM 16 kHz -> Silero VAD)`);
  const streams = makeStreams();
  let sink = 0;
  const baseline = await timed('baseline: copy each frame', total, async () => {
    for (let i = 0; i < framesPerStream; i++) {
      for (const s of streams) sink += Buffer.from(frameAt(s, i)).length;
      await Promise.resolve();
    }
  });
  const decodeOnly = await timed('decode + resample', total, async () => {
    for (let i = 0; i < framesPerStream; i++) {
      for (const s of streams) sink += s.decoder.decode(frameAt(s, i)).length;
      await Promise.resolve();
    }
  });
  let events = 0;
  const pipeline = await timed('decode + resample + VAD', total, async () => {
    for (let i = 0; i < framesPerStream; i++) {
      const pushes = streams.map((s) => s.vad.push(s.decoder.decode(frameAt(s, i))));
      for (const found of await Promise.all(pushes)) events += found.filter((e) => e.type !== 'speech').length;
    }
  });

  // Silero alone, one window at a time.
  const windows: number[] = [];
  let state = model.initialState();
  const input = new Float32Array(576);
  for (let i = 0; i < 2000; i++) {
    for (let j = 0; j < input.length; j++) input[j] = (call16k[(i * 512 + j) % call16k.length] ?? 0) / 32768;
    const start = performance.now();
    state = (await model.step(input, state)).state;
    windows.push((performance.now() - start) * 1000);
  }
  windows.sort((a, b) => a - b);

  const core = (perFrameUs: number) => ((perFrameUs * STREAMS) / (FRAME_MS * 1000)) * 100;
  console.log(`\n  decode + resample: ${(decodeOnly / baseline).toFixed(1)}x the bare copy; with VAD: ${(pipeline / baseline).toFixed(1)}x`);
  console.log(`  ${STREAMS} live streams would take ${core(pipeline).toFixed(1)}% of one core (decode + resample alone: ${core(decodeOnly).toFixed(2)}%)`);
  console.log(`  Silero VAD per 512-sample window (32 ms): p50 ${windows[1000]!.toFixed(0)} us, p99 ${windows[1980]!.toFixed(0)} us`);
  console.log(`  (${events} speech_start/speech_end events; checksum ${sink})\n`);
  await model.close();
}

await main();
