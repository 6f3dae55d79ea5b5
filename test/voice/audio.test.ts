import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { createDecoder, createEncoder, SAMPLE_RATES, type AudioFormat } from '../../src/voice/audio/format.ts';
import { bytesToSamples, concatSamples, rmsLevel, samplesToBytes } from '../../src/voice/audio/pcm.ts';
import { createResampler } from '../../src/voice/audio/resample.ts';
import { readWav, writeWav } from '../../src/voice/audio/wav.ts';
import { durationRatio, similarity } from './support/compare.ts';
import { bandLimited, espeakWav, speech, speechBytes } from './support/speech.ts';

const TEXT = 'Hello, I would like to book a table for two at eight tonight.';

function sine(rate: number, seconds: number, hz: number, amplitude = 10000): Int16Array {
  return Int16Array.from({ length: Math.round(rate * seconds) }, (_, i) => Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate)));
}

/** A seeded generator (mulberry32), so a failing chunking is the same on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function inChunks<T extends { length: number; subarray(a: number, b: number): T }>(data: T, seed: number, max: number): T[] {
  const next = random(seed);
  const chunks: T[] = [];
  for (let at = 0; at < data.length; ) {
    const size = 1 + Math.floor(next() * max);
    chunks.push(data.subarray(at, at + size));
    at += size;
  }
  return chunks;
}

const middle = (pcm: Int16Array) => pcm.subarray(Math.floor(pcm.length / 4), Math.floor((3 * pcm.length) / 4));

describe('audio formats', () => {
  let speech16: Int16Array;
  before(async () => {
    speech16 = await speech(TEXT, 16000);
  });

  it('speech through mu-law 8 kHz and back to 16 kHz keeps its duration and its 8 kHz band', async () => {
    const wire = createEncoder(16000, { encoding: 'mulaw', sampleRate: 8000 }).encode(speech16);
    const back = createDecoder({ encoding: 'mulaw', sampleRate: 8000 }, 16000).decode(wire);
    const ratio = durationRatio(speech16, back);
    assert.ok(Math.abs(ratio - 1) <= 0.01, `duration ratio ${ratio}`);
    const reference = await bandLimited(speech16, 16000, 8000);
    const { ncc } = similarity(reference, back);
    assert.ok(ncc >= 0.9, `NCC ${ncc}`);
  });

  it('decodes what sox encodes: mu-law and A-law 8 kHz, PCM at 48 kHz', async () => {
    const reference = await bandLimited(speech16, 16000, 8000);
    for (const format of [{ encoding: 'mulaw', sampleRate: 8000 }, { encoding: 'alaw', sampleRate: 8000 }, { encoding: 'pcm_s16le', sampleRate: 48000 }] as AudioFormat[]) {
      const decoded = createDecoder(format, 16000).decode(await speechBytes(TEXT, format));
      const ratio = durationRatio(reference, decoded);
      assert.ok(Math.abs(ratio - 1) <= 0.01, `${format.encoding}/${format.sampleRate}: duration ratio ${ratio}`);
      const { ncc } = similarity(format.sampleRate === 8000 ? reference : speech16, decoded);
      assert.ok(ncc >= 0.9, `${format.encoding}/${format.sampleRate}: NCC ${ncc}`);
    }
  });

  it('decodes a stream cut at random places (odd PCM byte counts too) exactly as in one piece', () => {
    for (const format of [{ encoding: 'pcm_s16le', sampleRate: 48000 }, { encoding: 'pcm_s16le', sampleRate: 22050 }, { encoding: 'mulaw', sampleRate: 8000 }] as AudioFormat[]) {
      const wire = createEncoder(16000, format).encode(speech16.subarray(0, 24000));
      const whole = createDecoder(format, 16000).decode(wire);
      for (const seed of [1, 2, 3]) {
        const decoder = createDecoder(format, 16000);
        const pieces = concatSamples(inChunks(wire, seed, 999).map((chunk) => decoder.decode(chunk)));
        assert.deepEqual(pieces, whole, `${format.encoding}/${format.sampleRate}, seed ${seed}`);
      }
    }
  });

  it('encodes a stream cut at random places exactly as in one piece', () => {
    for (const format of [{ encoding: 'pcm_s16le', sampleRate: 24000 }, { encoding: 'alaw', sampleRate: 8000 }, { encoding: 'mulaw', sampleRate: 44100 }] as AudioFormat[]) {
      const part = speech16.subarray(0, 24000);
      const whole = createEncoder(16000, format).encode(part);
      for (const seed of [4, 5]) {
        const encoder = createEncoder(16000, format);
        const pieces = Buffer.concat(inChunks(part, seed, 700).map((chunk) => encoder.encode(chunk)));
        assert.deepEqual(pieces, whole, `${format.encoding}/${format.sampleRate}, seed ${seed}`);
      }
    }
  });

  it('a 1 kHz sine survives 16 kHz -> 48 kHz -> 16 kHz', () => {
    const tone = sine(16000, 1, 1000);
    const up = createResampler(16000, 48000).process(tone);
    const back = createResampler(48000, 16000).process(up);
    // The filters' delays are taken out: only their latency (a few ms held back) shortens the output.
    assert.ok(back.length > 16000 - 48 && back.length <= 16000, `${back.length} samples`);
    // Lags within half a period of the tone, so that the best one is unambiguous.
    const { ncc, lag } = similarity(tone.subarray(4000, 12000), back.subarray(4000, 12000), 7);
    assert.equal(lag, 0);
    assert.ok(ncc >= 0.999, `NCC ${ncc}`);
    const gain = rmsLevel(middle(back)) / rmsLevel(middle(tone));
    assert.ok(Math.abs(gain - 1) < 0.02, `gain ${gain}`);
  });

  it('between any two rates: keeps a 1 kHz tone, removes a tone the lower rate cannot carry', () => {
    for (const from of SAMPLE_RATES) {
      for (const to of SAMPLE_RATES) {
        if (from === to) continue;
        const kept = createResampler(from, to).process(sine(from, 0.25, 1000));
        const expectedLength = to * 0.25;
        assert.ok(kept.length <= expectedLength + 1 && kept.length > expectedLength * 0.98, `${from}->${to}: ${kept.length} samples`);
        const gain = rmsLevel(middle(kept)) / rmsLevel(middle(sine(to, 0.25, 1000)));
        assert.ok(Math.abs(gain - 1) < 0.03, `${from}->${to}: 1 kHz gain ${gain}`);
        if (to < from) {
          // A tone between the output's Nyquist frequency and the input's would fold back as an alias
          // (0.54 of the output rate: past the filter's transition band, which ends at 0.53).
          const alias = createResampler(from, to).process(sine(from, 0.25, Math.min(0.54 * to, 0.49 * from)));
          const level = rmsLevel(middle(alias)) / rmsLevel(sine(from, 0.25, 1000));
          assert.ok(level < 0.01, `${from}->${to}: alias at ${(20 * Math.log10(level)).toFixed(1)} dB`);
        }
      }
    }
  });

  it('WAV: writes mono PCM16 and reads it back; reads espeak-ng\'s streamed WAV and stereo files', async () => {
    const file = writeWav(speech16, 16000);
    assert.equal(file.length, 44 + speech16.length * 2);
    assert.deepEqual(readWav(file), { sampleRate: 16000, samples: speech16 });

    const streamed = readWav(await espeakWav('testing'));
    assert.equal(streamed.sampleRate, 22050);
    assert.ok(streamed.samples.length > 22050 * 0.3, `${streamed.samples.length} samples`);

    const stereo = Buffer.from(writeWav(Int16Array.from([100, 300, -100, -300]), 8000));
    stereo.writeUInt16LE(2, 22); // channels
    stereo.writeUInt16LE(4, 32); // block align
    assert.deepEqual(readWav(stereo).samples, Int16Array.from([200, -200]));
  });

  it('PCM helpers: views where aligned, copies where not; RMS from 0 to 1', () => {
    const samples = Int16Array.from([1, -2, 32767, -32768]);
    const bytes = samplesToBytes(samples);
    assert.equal(bytes.buffer, samples.buffer);
    assert.deepEqual(bytesToSamples(bytes), samples);
    const odd = Buffer.alloc(bytes.length + 1);
    bytes.copy(odd, 1);
    assert.deepEqual(bytesToSamples(odd.subarray(1)), samples);
    assert.equal(rmsLevel(new Int16Array(160)), 0);
    assert.ok(Math.abs(rmsLevel(Int16Array.from({ length: 160 }, (_, i) => (i % 2 ? -32768 : 32767))) - 1) < 1e-4);
  });
});
