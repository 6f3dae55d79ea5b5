import { endianness } from 'node:os';

const LITTLE_ENDIAN_HOST = endianness() === 'LE';

/**
 * The samples of little-endian PCM16 bytes. Shares the bytes' memory when it can (an even
 * offset and length on a little-endian host), so the caller must not reuse the buffer while
 * the samples are in use; copies otherwise. A trailing odd byte is ignored.
 */
export function bytesToSamples(bytes: Uint8Array): Int16Array {
  const count = bytes.byteLength >> 1;
  if (LITTLE_ENDIAN_HOST && bytes.byteOffset % 2 === 0) return new Int16Array(bytes.buffer, bytes.byteOffset, count);
  const samples = new Int16Array(count);
  const view = new DataView(bytes.buffer, bytes.byteOffset, count * 2);
  for (let i = 0; i < count; i++) samples[i] = view.getInt16(i * 2, true);
  return samples;
}

/** The little-endian bytes of samples, sharing their memory on a little-endian host. */
export function samplesToBytes(samples: Int16Array): Buffer {
  if (LITTLE_ENDIAN_HOST) return Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
  const bytes = Buffer.allocUnsafe(samples.length * 2);
  for (let i = 0; i < samples.length; i++) bytes.writeInt16LE(samples[i]!, i * 2);
  return bytes;
}

/** Root mean square level, 0 (silence) to 1 (a full-scale square wave). */
export function rmsLevel(samples: Int16Array): number {
  if (samples.length === 0) return 0;
  let sum = 0;
  for (let i = 0; i < samples.length; i++) sum += samples[i]! * samples[i]!;
  return Math.min(1, Math.sqrt(sum / samples.length) / 32768);
}

export function samplesFor(seconds: number, sampleRate: number): number {
  return Math.round(seconds * sampleRate);
}

/** One Int16Array of several, in order. */
export function concatSamples(parts: readonly Int16Array[]): Int16Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Int16Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
