import { endianness } from 'node:os';

const LITTLE_ENDIAN = endianness() === 'LE';

/**
 * Turns a byte stream of PCM16 little-endian samples into Int16Arrays. Network chunks may end
 * in the middle of a sample, so an odd trailing byte is kept for the next chunk.
 */
export class Pcm16Assembler {
  private carry: number | null = null;

  push(bytes: Uint8Array): Int16Array {
    const offset = this.carry === null ? 0 : 1;
    const total = bytes.length + offset;
    const samples = new Int16Array(total >> 1);
    const view = new Uint8Array(samples.buffer);
    if (this.carry !== null) view[0] = this.carry;
    view.set(bytes.subarray(0, samples.length * 2 - offset), offset);
    this.carry = total % 2 === 1 ? (bytes[bytes.length - 1] as number) : null;
    if (!LITTLE_ENDIAN) swapBytes(view);
    return samples;
  }
}

/** PCM16 little-endian bytes (a whole number of samples) as samples. */
export function pcm16FromBytes(bytes: Uint8Array): Int16Array {
  return new Pcm16Assembler().push(bytes);
}

function swapBytes(view: Uint8Array): void {
  for (let i = 0; i + 1 < view.length; i += 2) {
    const a = view[i] as number;
    view[i] = view[i + 1] as number;
    view[i + 1] = a;
  }
}
