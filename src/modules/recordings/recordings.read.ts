import { Readable } from 'node:stream';
import type { Selectable } from 'kysely';
import { ChunkLayout, openChunk, streamHeader, TAG_BYTES } from '../../crypto/chunked-cipher.ts';
import type { SecretBox } from '../../crypto/secret-box.ts';
import type { ObjectStore } from './storage.ts';
import type { CallRecordingTable } from './recordings.table.ts';

export const WAV_HEADER_BYTES = 44;
/** Records read from the store in one request while a WAV streams out. */
const RECORDS_PER_READ = 16;

/** The 44-byte header of a PCM16 WAV of `bytes` of data. */
export function wavHeader(sampleRate: number, channels: number, bytes: number): Buffer {
  const header = Buffer.alloc(WAV_HEADER_BYTES);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + bytes, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * channels * 2, 28);
  header.writeUInt16LE(channels * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(bytes, 40);
  return header;
}

type Row = Pick<Selectable<CallRecordingTable>, 'object_key' | 'data_key' | 'chunk_bytes' | 'bytes' | 'sample_rate' | 'channels'>;

/** The size of the WAV a recording reads as. */
export const wavSize = (row: Pick<Row, 'bytes'>) => WAV_HEADER_BYTES + Number(row.bytes);

/**
 * Bytes [start, end) of the recording as a WAV, streamed: the header is made from the row, and
 * of the sealed object only the records that hold the range are read and opened, a few at a time.
 */
export function wavStream(objects: ObjectStore, box: SecretBox, row: Row, start: number, end: number): Readable {
  const key = Buffer.from(box.open(row.data_key), 'base64');
  const layout = new ChunkLayout(row.chunk_bytes, Number(row.bytes));
  const header = streamHeader(row.chunk_bytes);
  async function* bytes(): AsyncGenerator<Buffer> {
    if (start < WAV_HEADER_BYTES) yield wavHeader(row.sample_rate, row.channels, layout.plainBytes).subarray(start, Math.min(end, WAV_HEADER_BYTES));
    const from = Math.max(0, start - WAV_HEADER_BYTES);
    const to = end - WAV_HEADER_BYTES;
    if (to <= from) return;
    const last = Math.floor((to - 1) / layout.chunkBytes);
    for (let first = Math.floor(from / layout.chunkBytes); first <= last; first += RECORDS_PER_READ) {
      const upTo = Math.min(last, first + RECORDS_PER_READ - 1);
      const sealed = await objects.read(row.object_key, layout.offsetOf(first), layout.offsetOf(upTo) + layout.plainOf(upTo) + TAG_BYTES);
      for (let index = first; index <= upTo; index++) {
        const at = layout.offsetOf(index) - layout.offsetOf(first);
        const plain = openChunk(key, header, index, sealed.subarray(at, at + layout.plainOf(index) + TAG_BYTES), index === layout.lastIndex);
        const base = index * layout.chunkBytes;
        yield plain.subarray(Math.max(0, from - base), Math.min(plain.length, to - base));
      }
    }
  }
  return Readable.from(bytes(), { objectMode: false });
}
