import alawmulaw from 'alawmulaw';
import { bytesToSamples, samplesToBytes } from './pcm.ts';
import { createResampler } from './resample.ts';

/** Wire encodings: PCM16 little-endian, or G.711 (mu-law = PCMU, A-law = PCMA). */
export type Encoding = 'pcm_s16le' | 'mulaw' | 'alaw';

export interface AudioFormat {
  encoding: Encoding;
  sampleRate: number;
}

/** The rate of the pipeline between transports, VAD and STT: PCM16 mono at 16 kHz. */
export const PIPELINE_RATE = 16000;

/** The rates the wire formats and the resampler are tested at. */
export const SAMPLE_RATES = [8000, 16000, 22050, 24000, 44100, 48000] as const;

export interface AudioDecoder {
  /** The next chunk of a wire stream (any size) as PCM16 at the target rate. */
  decode(chunk: Buffer): Int16Array;
}

export interface AudioEncoder {
  /** The next PCM16 chunk of a stream (any size) as wire bytes. */
  encode(pcm: Int16Array): Buffer;
}

/**
 * A stream decoder from a wire format to PCM16 at toRate. It keeps state between chunks: an
 * odd trailing PCM byte waits for the next chunk, and the resampler's filter runs on, so a
 * stream cut anywhere decodes to the same samples. The result may share memory with the chunk.
 */
export function createDecoder(from: AudioFormat, toRate: number = PIPELINE_RATE): AudioDecoder {
  checkFormat(from);
  const resampler = createResampler(from.sampleRate, toRate);
  if (from.encoding !== 'pcm_s16le') {
    const codec = from.encoding === 'mulaw' ? alawmulaw.mulaw : alawmulaw.alaw;
    return { decode: (chunk) => resampler.process(codec.decode(chunk)) };
  }
  let pending: number | null = null; // the odd byte left over from the last chunk
  return {
    decode(chunk) {
      let bytes: Uint8Array = chunk;
      if (pending !== null) {
        bytes = new Uint8Array(chunk.length + 1);
        bytes[0] = pending;
        bytes.set(chunk, 1);
        pending = null;
      }
      if (bytes.length % 2 === 1) pending = bytes[bytes.length - 1]!;
      return resampler.process(bytesToSamples(bytes));
    },
  };
}

/** A stream encoder from PCM16 at fromRate to a wire format; the resampler's state carries over. */
export function createEncoder(fromRate: number, to: AudioFormat): AudioEncoder {
  checkFormat(to);
  const resampler = createResampler(fromRate, to.sampleRate);
  if (to.encoding === 'pcm_s16le') return { encode: (pcm) => samplesToBytes(resampler.process(pcm)) };
  const codec = to.encoding === 'mulaw' ? alawmulaw.mulaw : alawmulaw.alaw;
  return {
    encode(pcm) {
      const encoded = codec.encode(resampler.process(pcm));
      return Buffer.from(encoded.buffer, encoded.byteOffset, encoded.byteLength);
    },
  };
}

function checkFormat(format: AudioFormat): void {
  if (!['pcm_s16le', 'mulaw', 'alaw'].includes(format.encoding)) throw new RangeError(`unknown audio encoding ${String(format.encoding)}`);
  if (!Number.isInteger(format.sampleRate) || format.sampleRate <= 0) throw new RangeError(`bad sample rate ${format.sampleRate}`);
}
