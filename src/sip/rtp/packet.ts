// RTP packets (RFC 3550 §5.1) through werift-rtp. werift trusts its input (a short buffer
// throws a RangeError from deep inside), so every length is checked here first and any
// failure comes out as an RtpParseError.
import { RtpHeader, RtpPacket } from 'werift-rtp';

export class RtpParseError extends Error {
  override name = 'RtpParseError';
}

export interface RtpPacketView {
  payloadType: number;
  sequenceNumber: number;
  timestamp: number;
  ssrc: number;
  marker: boolean;
  payload: Buffer;
}

export const RTP_HEADER_BYTES = 12;
/** Larger than any packet a G.711 call sends; bigger datagrams are dropped unread. */
export const MAX_RTP_BYTES = 1500;

/** Checks version, CSRC count, header extension and padding against the buffer's length. */
function check(buf: Buffer): void {
  if (buf.length < RTP_HEADER_BYTES) throw new RtpParseError(`RTP packet of ${buf.length} bytes is shorter than its header`);
  if (buf.length > MAX_RTP_BYTES) throw new RtpParseError(`RTP packet of ${buf.length} bytes is too large`);
  const first = buf[0] ?? 0;
  if (first >> 6 !== 2) throw new RtpParseError(`RTP version ${first >> 6}`);
  let offset = RTP_HEADER_BYTES + (first & 0x0f) * 4;
  if (first & 0x10) {
    if (offset + 4 > buf.length) throw new RtpParseError('RTP header extension truncated');
    offset += 4 + buf.readUInt16BE(offset + 2) * 4;
  }
  if (offset > buf.length) throw new RtpParseError('RTP header longer than the packet');
  if (first & 0x20) {
    const padding = buf[buf.length - 1] ?? 0;
    if (padding === 0 || offset + padding > buf.length) throw new RtpParseError('invalid RTP padding');
  }
}

export function parseRtp(buf: Buffer): RtpPacketView {
  check(buf);
  let packet: RtpPacket;
  try {
    packet = RtpPacket.deSerialize(buf);
  } catch (err) {
    throw new RtpParseError(`unreadable RTP packet: ${err instanceof Error ? err.message : String(err)}`);
  }
  const h = packet.header;
  return { payloadType: h.payloadType, sequenceNumber: h.sequenceNumber, timestamp: h.timestamp, ssrc: h.ssrc, marker: h.marker, payload: packet.payload };
}

export function buildRtp(view: Omit<RtpPacketView, 'payload'>, payload: Buffer): Buffer {
  const header = new RtpHeader({
    payloadType: view.payloadType,
    sequenceNumber: view.sequenceNumber & 0xffff,
    timestamp: view.timestamp >>> 0,
    ssrc: view.ssrc >>> 0,
    marker: view.marker,
  });
  return new RtpPacket(header, payload).serialize();
}

/**
 * Builds one stream's packets with a single werift header and packet object, changed in
 * place for each send: werift's constructors define every field one by one, which was the
 * largest cost of a send in bench/rtp.bench.ts.
 */
export class RtpWriter {
  readonly #header = new RtpHeader();
  readonly #packet = new RtpPacket(this.#header, Buffer.alloc(0));

  constructor(ssrc: number) {
    this.#header.ssrc = ssrc >>> 0;
  }

  write(payloadType: number, sequenceNumber: number, timestamp: number, marker: boolean, payload: Buffer): Buffer {
    const h = this.#header;
    h.payloadType = payloadType;
    h.sequenceNumber = sequenceNumber & 0xffff;
    h.timestamp = timestamp >>> 0;
    h.marker = marker;
    this.#packet.payload = payload;
    return this.#packet.serialize();
  }
}
