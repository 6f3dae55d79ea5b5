/**
 * Real speech for the fake providers: the Debian `espeak-ng` CLI (not the wasm build Parley
 * ships, so a fake never shares code with what it tests), resampled to the format asked for.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** PCM16 mono speech of `text` at `sampleRate`. */
export async function speak(text: string, sampleRate: number, voice = 'en'): Promise<Int16Array> {
  const { stdout } = await run('espeak-ng', ['--stdout', '-v', voice, text], { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 });
  const wav = parseWav(stdout);
  return resampleLinear(wav.pcm, wav.sampleRate, sampleRate);
}

/** The samples and rate of a PCM16 mono WAV (espeak-ng's `--stdout` leaves the sizes unset). */
export function parseWav(bytes: Buffer): { pcm: Int16Array; sampleRate: number } {
  if (bytes.toString('ascii', 0, 4) !== 'RIFF' || bytes.toString('ascii', 8, 12) !== 'WAVE') throw new Error('not a WAV file');
  let offset = 12;
  let sampleRate = 0;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString('ascii', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    if (id === 'fmt ') {
      if (bytes.readUInt16LE(offset + 8) !== 1 || bytes.readUInt16LE(offset + 10) !== 1 || bytes.readUInt16LE(offset + 22) !== 16) throw new Error('not PCM16 mono');
      sampleRate = bytes.readUInt32LE(offset + 12);
    }
    if (id === 'data') {
      // A streamed WAV's data size may be 0 or 0xffffffff: the data runs to the end.
      const end = size === 0 || size === 0xffffffff || offset + 8 + size > bytes.length ? bytes.length : offset + 8 + size;
      const data = bytes.subarray(offset + 8, end - ((end - offset - 8) % 2));
      const pcm = new Int16Array(data.length / 2);
      for (let i = 0; i < pcm.length; i++) pcm[i] = data.readInt16LE(i * 2);
      return { pcm, sampleRate };
    }
    offset += 8 + size + (size % 2);
  }
  throw new Error('WAV without data');
}

/** Linear interpolation; enough for test audio (the real resampler lives with the codecs). */
export function resampleLinear(input: Int16Array, from: number, to: number): Int16Array {
  if (from === to) return input.slice();
  const length = Math.floor((input.length * to) / from);
  const out = new Int16Array(length);
  const step = from / to;
  for (let i = 0; i < length; i++) {
    const position = i * step;
    const left = Math.floor(position);
    const right = Math.min(left + 1, input.length - 1);
    const fraction = position - left;
    out[i] = Math.round((input[left] as number) * (1 - fraction) + (input[right] as number) * fraction);
  }
  return out;
}

export function pcmBytes(pcm: Int16Array): Buffer {
  const bytes = Buffer.alloc(pcm.length * 2);
  for (let i = 0; i < pcm.length; i++) bytes.writeInt16LE(pcm[i] as number, i * 2);
  return bytes;
}

export function pcmFromBase64(base64: string): Int16Array {
  const bytes = Buffer.from(base64, 'base64');
  const pcm = new Int16Array(bytes.length >> 1);
  for (let i = 0; i < pcm.length; i++) pcm[i] = bytes.readInt16LE(i * 2);
  return pcm;
}

export function concatPcm(parts: readonly Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** Root mean square of the samples, 0..32768. */
export function rms(pcm: Int16Array): number {
  if (pcm.length === 0) return 0;
  let sum = 0;
  for (const sample of pcm) sum += sample * sample;
  return Math.sqrt(sum / pcm.length);
}
