import { createCipheriv, createDecipheriv } from 'node:crypto';

/**
 * AES-256-GCM over a stream, in chunks of a fixed plaintext size, so a reader can decrypt any
 * chunk alone (seek) and still detect tampering, reordering and truncation:
 *
 *   header (12 bytes): "PRLREC" | version 1 | reserved 0 | chunk size (uint32 BE)
 *   record k:          ciphertext of chunk k | GCM tag (16 bytes)
 *
 * Every chunk but the last holds exactly `chunk size` bytes, so record k starts at
 * 12 + k × (chunk size + 16). The key is used for one stream only (a data key per recording),
 * so the nonce is the chunk's index; the additional data binds the header and whether the chunk
 * is the last one, so a stream cut after a whole chunk does not pass for complete.
 */
export const HEADER_BYTES = 12;
export const TAG_BYTES = 16;
const MAGIC = Buffer.from('PRLREC\x01\x00', 'latin1');

export function streamHeader(chunkBytes: number): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(header);
  header.writeUInt32BE(chunkBytes, 8);
  return header;
}

const nonceOf = (index: number) => {
  const nonce = Buffer.alloc(12);
  nonce.writeUInt32BE(Math.floor(index / 2 ** 32), 4);
  nonce.writeUInt32BE(index >>> 0, 8);
  return nonce;
};
const aadOf = (header: Buffer, last: boolean) => Buffer.concat([header, Buffer.from([last ? 1 : 0])]);

export function sealChunk(key: Buffer, header: Buffer, index: number, plain: Buffer, last: boolean): Buffer {
  return Buffer.concat(sealChunkParts(key, header, index, plain, last));
}

/** A chunk's record in its parts (ciphertext, the cipher's final bytes, the tag), for a vectored write with no copy of the whole. */
export function sealChunkParts(key: Buffer, header: Buffer, index: number, plain: Buffer, last: boolean): Buffer[] {
  const cipher = createCipheriv('aes-256-gcm', key, nonceOf(index));
  cipher.setAAD(aadOf(header, last));
  return [cipher.update(plain), cipher.final(), cipher.getAuthTag()];
}

export function openChunk(key: Buffer, header: Buffer, index: number, record: Buffer, last: boolean): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, nonceOf(index));
  decipher.setAAD(aadOf(header, last));
  decipher.setAuthTag(record.subarray(record.length - TAG_BYTES));
  return Buffer.concat([decipher.update(record.subarray(0, record.length - TAG_BYTES)), decipher.final()]);
}

/** The layout of a sealed stream of `plainBytes`: its chunks and where each record lies. */
export class ChunkLayout {
  readonly lastIndex: number;
  constructor(readonly chunkBytes: number, readonly plainBytes: number) {
    // A stream whose size is a whole number of chunks ends with an empty last chunk.
    this.lastIndex = Math.floor(plainBytes / chunkBytes);
  }

  /** Plaintext bytes of chunk k. */
  plainOf(index: number): number {
    return index < this.lastIndex ? this.chunkBytes : this.plainBytes - this.lastIndex * this.chunkBytes;
  }

  /** Where record k starts in the sealed stream. */
  offsetOf(index: number): number {
    return HEADER_BYTES + index * (this.chunkBytes + TAG_BYTES);
  }

  /** The sealed stream's whole size. */
  get sealedBytes(): number {
    return this.offsetOf(this.lastIndex) + this.plainOf(this.lastIndex) + TAG_BYTES;
  }
}
