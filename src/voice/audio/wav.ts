import { bytesToSamples, samplesToBytes } from './pcm.ts';

export interface WavAudio {
  sampleRate: number;
  /** Mono PCM16; stereo files are averaged down. */
  samples: Int16Array;
}

const WAVE_FORMAT_PCM = 1;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;

/**
 * Reads a PCM16 WAV file (mono or stereo). A data chunk whose size runs past the end of the
 * file is read to the end: programs that stream WAV to a pipe (espeak-ng --stdout) cannot go
 * back to fill in the size.
 */
export function readWav(file: Uint8Array): WavAudio {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const tag = (at: number) => String.fromCharCode(file[at]!, file[at + 1]!, file[at + 2]!, file[at + 3]!);
  if (file.byteLength < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') throw new Error('not a RIFF/WAVE file');
  let format: { channels: number; sampleRate: number; bits: number; code: number } | null = null;
  let at = 12;
  while (at + 8 <= file.byteLength) {
    const id = tag(at);
    const size = view.getUint32(at + 4, true);
    const body = at + 8;
    if (id === 'fmt ') {
      const code = view.getUint16(body, true);
      format = {
        code: code === WAVE_FORMAT_EXTENSIBLE && size >= 26 ? view.getUint16(body + 24, true) : code,
        channels: view.getUint16(body + 2, true),
        sampleRate: view.getUint32(body + 4, true),
        bits: view.getUint16(body + 14, true),
      };
    } else if (id === 'data') {
      if (!format) throw new Error('WAV data chunk before its fmt chunk');
      if (format.code !== WAVE_FORMAT_PCM || format.bits !== 16) throw new Error(`only PCM16 WAV is read (format ${format.code}, ${format.bits} bits)`);
      if (format.channels !== 1 && format.channels !== 2) throw new Error(`only mono or stereo WAV is read (${format.channels} channels)`);
      const end = Math.min(file.byteLength, body + size);
      const frameBytes = 2 * format.channels;
      const data = file.subarray(body, body + Math.floor((end - body) / frameBytes) * frameBytes);
      const interleaved = bytesToSamples(data.byteOffset % 2 === 0 ? data : data.slice());
      return { sampleRate: format.sampleRate, samples: format.channels === 1 ? interleaved.slice() : downmix(interleaved) };
    }
    at = body + size + (size % 2); // chunks are padded to an even length
  }
  throw new Error('WAV file without a data chunk');
}

/** A mono PCM16 WAV file of the samples. */
export function writeWav(samples: Int16Array, sampleRate: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + samples.byteLength, 4);
  header.write('WAVE', 8, 'latin1');
  header.write('fmt ', 12, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(WAVE_FORMAT_PCM, 20);
  header.writeUInt16LE(1, 22); // channels
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28); // byte rate
  header.writeUInt16LE(2, 32); // block align
  header.writeUInt16LE(16, 34); // bits per sample
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(samples.byteLength, 40);
  return Buffer.concat([header, samplesToBytes(samples)]);
}

function downmix(stereo: Int16Array): Int16Array {
  const mono = new Int16Array(stereo.length / 2);
  for (let i = 0; i < mono.length; i++) mono[i] = (stereo[2 * i]! + stereo[2 * i + 1]!) >> 1;
  return mono;
}
