// RTCP sender and receiver reports (RFC 3550 §6.4) with an SDES CNAME, built and read
// through werift-rtp. A compound packet is walked here with every length checked, since
// werift's own walker reads past the end of truncated input.
import { RtcpReceiverInfo, RtcpRrPacket, RtcpSenderInfo, RtcpSourceDescriptionPacket, RtcpSrPacket, SourceDescriptionChunk, SourceDescriptionItem } from 'werift-rtp';
import { RtpParseError } from './packet.ts';

export interface ReportBlock {
  ssrc: number;
  /** Fraction lost since the previous report, 0..255 (RFC 3550's 8-bit fixed point). */
  fractionLost: number;
  /** Cumulative packets lost; negative when duplicates outnumber losses. */
  packetsLost: number;
  highestSequence: number;
  /** Interarrival jitter in timestamp units. */
  jitter: number;
  lsr: number;
  dlsr: number;
}

export interface SenderInfo {
  ntpTimestamp: bigint;
  rtpTimestamp: number;
  packetCount: number;
  octetCount: number;
}

export interface RtcpReport {
  ssrc: number;
  sender: SenderInfo | null;
  reports: ReportBlock[];
}

export interface ParsedRtcp {
  reports: RtcpReport[];
  /** SSRCs that said goodbye (RTCP BYE). */
  byes: number[];
}

const NTP_EPOCH_OFFSET = 2_208_988_800n;
const RTCP_SR = 200;
const RTCP_RR = 201;
const RTCP_BYE = 203;
export const MAX_RTCP_BYTES = 1500;

/** 64-bit NTP timestamp (RFC 5905) of a wall-clock time in ms. */
export function ntpFromMs(ms: number): bigint {
  const seconds = BigInt(Math.floor(ms / 1000)) + NTP_EPOCH_OFFSET;
  const fraction = BigInt(Math.floor(((ms % 1000) / 1000) * 2 ** 32));
  return (seconds << 32n) | fraction;
}

/** The middle 32 bits of an NTP timestamp: what LSR carries (RFC 3550 §6.4.1). */
export function ntpMiddle(ntp: bigint): number {
  return Number((ntp >> 16n) & 0xffffffffn);
}

function info(block: ReportBlock): RtcpReceiverInfo {
  return new RtcpReceiverInfo({
    ssrc: block.ssrc >>> 0,
    fractionLost: Math.max(0, Math.min(255, block.fractionLost)),
    // 24-bit two's complement, as the field is signed.
    packetsLost: Math.max(-0x800000, Math.min(0x7fffff, block.packetsLost)) & 0xffffff,
    highestSequence: block.highestSequence >>> 0,
    jitter: Math.max(0, Math.floor(block.jitter)) >>> 0,
    lsr: block.lsr >>> 0,
    dlsr: block.dlsr >>> 0,
  });
}

/**
 * A compound packet (RFC 3550 §6.1): SR (when we sent media since the last report) or RR, then
 * SDES CNAME, and with `bye` our RTCP BYE last, so that it never travels alone.
 */
export function buildReport(input: { ssrc: number; sender: SenderInfo | null; block: ReportBlock | null; cname: string; bye?: boolean }): Buffer {
  const reports = input.block ? [info(input.block)] : [];
  const first = input.sender
    ? new RtcpSrPacket({ ssrc: input.ssrc >>> 0, senderInfo: new RtcpSenderInfo({ ...input.sender, rtpTimestamp: input.sender.rtpTimestamp >>> 0 }), reports }).serialize()
    : new RtcpRrPacket({ ssrc: input.ssrc >>> 0, reports }).serialize();
  const sdes = new RtcpSourceDescriptionPacket({
    chunks: [new SourceDescriptionChunk({ source: input.ssrc >>> 0, items: [new SourceDescriptionItem({ type: 1, text: input.cname.slice(0, 255) })] })],
  }).serialize();
  return Buffer.concat(input.bye ? [first, sdes, buildBye(input.ssrc)] : [first, sdes]);
}

/** RTCP BYE for our SSRC (RFC 3550 §6.6): the last part of the compound packet sent when the session closes. */
export function buildBye(ssrc: number): Buffer {
  const buf = Buffer.alloc(8);
  buf[0] = 0x81;
  buf[1] = RTCP_BYE;
  buf.writeUInt16BE(1, 2);
  buf.writeUInt32BE(ssrc >>> 0, 4);
  return buf;
}

function block(r: RtcpReceiverInfo): ReportBlock {
  const lost = r.packetsLost & 0xffffff;
  return { ssrc: r.ssrc, fractionLost: r.fractionLost, packetsLost: lost & 0x800000 ? lost - 0x1000000 : lost, highestSequence: r.highestSequence, jitter: r.jitter, lsr: r.lsr, dlsr: r.dlsr };
}

/** Reads SR, RR and BYE out of a compound packet; other packet types are skipped. */
export function parseRtcp(buf: Buffer): ParsedRtcp {
  if (buf.length < 4 || buf.length > MAX_RTCP_BYTES) throw new RtpParseError(`RTCP packet of ${buf.length} bytes`);
  const out: ParsedRtcp = { reports: [], byes: [] };
  for (let pos = 0; pos < buf.length; ) {
    if (pos + 4 > buf.length) throw new RtpParseError('truncated RTCP header');
    const first = buf[pos] ?? 0;
    if (first >> 6 !== 2) throw new RtpParseError(`RTCP version ${first >> 6}`);
    const type = buf[pos + 1] ?? 0;
    const count = first & 0x1f;
    const end = pos + 4 + buf.readUInt16BE(pos + 2) * 4;
    if (end > buf.length) throw new RtpParseError('RTCP packet longer than the datagram');
    let body = buf.subarray(pos + 4, end);
    if (first & 0x20) {
      const padding = body[body.length - 1] ?? 0;
      if (padding === 0 || padding > body.length) throw new RtpParseError('invalid RTCP padding');
      body = body.subarray(0, body.length - padding);
    }
    const need = type === RTCP_SR ? 24 + count * 24 : type === RTCP_RR ? 4 + count * 24 : type === RTCP_BYE ? count * 4 : 0;
    if (body.length < need) throw new RtpParseError(`RTCP packet type ${type} too short for ${count} entries`);
    try {
      if (type === RTCP_SR) {
        const sr = RtcpSrPacket.deSerialize(body, count);
        out.reports.push({ ssrc: sr.ssrc, sender: { ...sr.senderInfo }, reports: sr.reports.map(block) });
      } else if (type === RTCP_RR) {
        const rr = RtcpRrPacket.deSerialize(body, count);
        out.reports.push({ ssrc: rr.ssrc, sender: null, reports: rr.reports.map(block) });
      } else if (type === RTCP_BYE) {
        for (let i = 0; i < count; i++) out.byes.push(body.readUInt32BE(i * 4));
      }
    } catch (err) {
      throw new RtpParseError(`unreadable RTCP packet: ${err instanceof Error ? err.message : String(err)}`);
    }
    pos = end;
  }
  return out;
}
