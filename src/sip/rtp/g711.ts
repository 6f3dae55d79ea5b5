// G.711 through alawmulaw, and the silence byte of each law.
import alawmulaw from 'alawmulaw';
import type { CodecName } from '../sdp.ts';

export const SILENCE: Record<CodecName, number> = { PCMU: 0xff, PCMA: 0xd5 };

export function encodeG711(codec: CodecName, pcm: Int16Array): Buffer {
  const bytes = codec === 'PCMU' ? alawmulaw.mulaw.encode(pcm) : alawmulaw.alaw.encode(pcm);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function decodeG711(codec: CodecName, payload: Buffer): Int16Array {
  const bytes = new Uint8Array(payload.buffer, payload.byteOffset, payload.byteLength);
  return codec === 'PCMU' ? alawmulaw.mulaw.decode(bytes) : alawmulaw.alaw.decode(bytes);
}
