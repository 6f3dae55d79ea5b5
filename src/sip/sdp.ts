// SDP offer/answer for one audio stream (RFC 4566, RFC 3264): G.711 PCMU/PCMA at 8 kHz,
// RFC 4733 telephone-event, 20 ms packets. Parsing and writing go through sdp-transform;
// the choices (codec order, direction, which m-line) are ours.
import { isIP } from 'node:net';
import sdpTransform from 'sdp-transform';
import type { MediaDescription, SessionDescription } from 'sdp-transform';

export type CodecName = 'PCMU' | 'PCMA';
export type Direction = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';

/** Static payload types of RFC 3551; our order of preference is the array order. */
export const CODECS: ReadonlyArray<{ name: CodecName; payloadType: number }> = [
  { name: 'PCMU', payloadType: 0 },
  { name: 'PCMA', payloadType: 8 },
];
export const DEFAULT_DTMF_PAYLOAD_TYPE = 101;
export const PTIME_MS = 20;

/** No usable audio in an offer or answer: the SIP answer is 488 Not Acceptable Here. */
export class SdpNegotiationError extends Error {
  override name = 'SdpNegotiationError';
  readonly status = 488;
}

/** What both sides agreed for the audio stream, seen from our side. */
export interface NegotiatedMedia {
  codec: CodecName;
  payloadType: number;
  /** The telephone-event payload type both sides use, or null when the peer has none. */
  dtmfPayloadType: number | null;
  /** Where the peer wants RTP; null while on hold with c=0.0.0.0 or port 0. */
  remoteAddress: string | null;
  remotePort: number;
  remoteRtcpPort: number;
  /** Our direction: what we may do (the peer's sendonly makes ours recvonly). */
  direction: Direction;
  ptime: number;
}

export interface LocalMedia {
  /** The address put in c= and o= (PARLEY_MEDIA_ADDRESS). */
  address: string;
  port: number;
  /** o= session id and version; the version goes up whenever our description changes. */
  sessionId: number;
  sessionVersion: number;
  direction?: Direction;
}

const ipVer = (address: string): 4 | 6 => (isIP(address) === 6 ? 6 : 4);
const FLIP: Record<Direction, Direction> = { sendrecv: 'sendrecv', sendonly: 'recvonly', recvonly: 'sendonly', inactive: 'inactive' };

function parse(text: string): SessionDescription {
  if (text.length > 16 * 1024) throw new SdpNegotiationError('SDP too large');
  let session: SessionDescription;
  try {
    session = sdpTransform.parse(text);
  } catch {
    throw new SdpNegotiationError('unparseable SDP');
  }
  if (!Array.isArray(session.media)) throw new SdpNegotiationError('SDP has no media');
  return session;
}

interface Format {
  payloadType: number;
  name: string;
  rate: number;
}

function formatsOf(m: MediaDescription): Format[] {
  // RTP payload types are 7 bits (RFC 3550 §5.1); anything larger cannot be sent.
  const pts = String(m.payloads ?? '').trim().split(/\s+/).filter((p) => /^\d{1,3}$/.test(p)).map(Number).filter((pt) => pt < 128);
  return pts.map((pt) => {
    const map = (m.rtp ?? []).find((r) => Number(r.payload) === pt);
    // sdp-transform types promise strings, but "a=rtpmap:8 0" yields a number: coerce.
    if (map) return { payloadType: pt, name: String(map.codec ?? '').toUpperCase(), rate: Number(map.rate ?? 0) };
    const known = CODECS.find((c) => c.payloadType === pt);
    return { payloadType: pt, name: known?.name ?? '', rate: known ? 8000 : 0 };
  });
}

function directionOf(session: SessionDescription, m: MediaDescription): Direction {
  return m.direction ?? session.direction ?? 'sendrecv';
}

/** The first audio m-line we can use: RTP/AVP with a live port. Returns its index too. */
function audioLine(session: SessionDescription): { m: MediaDescription; index: number } | null {
  const index = session.media.findIndex((m) => m.type === 'audio' && Number(m.port) > 0 && Number(m.port) < 65536 && /^RTP\/AVP$/i.test(String(m.protocol)));
  const m = session.media[index];
  return m ? { m, index } : null;
}

function remoteOf(session: SessionDescription, m: MediaDescription): Pick<NegotiatedMedia, 'remoteAddress' | 'remotePort' | 'remoteRtcpPort' | 'ptime'> {
  const ip = m.connection?.ip ?? session.connection?.ip ?? null;
  // c=0.0.0.0 is the RFC 2543 way to put a call on hold: keep the call, send nothing.
  const remoteAddress = ip && isIP(ip) !== 0 && ip !== '0.0.0.0' && ip !== '::' ? ip : null;
  const rtcpPort = Number(m.rtcp?.port);
  const rtcp = Number.isInteger(rtcpPort) && rtcpPort > 0 && rtcpPort < 65536 ? rtcpPort : Math.min(m.port + 1, 65535);
  const ptime = Number(m.ptime);
  return { remoteAddress, remotePort: m.port, remoteRtcpPort: rtcp, ptime: ptime > 0 && ptime <= 1000 ? ptime : PTIME_MS };
}

function dtmfOf(formats: Format[]): number | null {
  return formats.find((f) => f.name === 'TELEPHONE-EVENT' && f.rate === 8000)?.payloadType ?? null;
}

/** Picks our codec from a remote offer (our preference order); throws SdpNegotiationError (488). */
export function negotiateOffer(offerText: string, preference: readonly CodecName[] = ['PCMU', 'PCMA']): NegotiatedMedia & { mediaIndex: number; mediaCount: number } {
  const session = parse(offerText);
  const line = audioLine(session);
  if (!line) throw new SdpNegotiationError('no RTP/AVP audio stream in the offer');
  const formats = formatsOf(line.m);
  for (const name of preference) {
    const f = formats.find((x) => x.name === name && x.rate === 8000);
    if (!f) continue;
    return {
      codec: name,
      payloadType: f.payloadType,
      dtmfPayloadType: dtmfOf(formats),
      direction: FLIP[directionOf(session, line.m)],
      ...remoteOf(session, line.m),
      mediaIndex: line.index,
      mediaCount: session.media.length,
    };
  }
  throw new SdpNegotiationError('no common codec (we speak PCMU and PCMA)');
}

function mediaLine(local: LocalMedia, formats: Format[], direction: Direction): MediaDescription {
  return {
    type: 'audio',
    port: local.port,
    protocol: 'RTP/AVP',
    payloads: formats.map((f) => f.payloadType).join(' '),
    rtp: formats.map((f) => ({ payload: f.payloadType, codec: f.name === 'TELEPHONE-EVENT' ? 'telephone-event' : f.name, rate: 8000 })),
    fmtp: formats.filter((f) => f.name === 'TELEPHONE-EVENT').map((f) => ({ payload: f.payloadType, config: '0-16' })),
    ptime: PTIME_MS,
    direction,
  };
}

function write(local: LocalMedia, media: MediaDescription[]): string {
  const session: SessionDescription = {
    version: 0,
    origin: { username: 'parley', sessionId: local.sessionId, sessionVersion: local.sessionVersion, netType: 'IN', ipVer: ipVer(local.address), address: local.address },
    name: 'parley',
    connection: { version: ipVer(local.address), ip: local.address },
    timing: { start: 0, stop: 0 },
    media,
  };
  return sdpTransform.write(session);
}

/** Our offer: PCMU, PCMA and telephone-event, ptime 20, sendrecv (or the given direction). */
export function buildOffer(local: LocalMedia, codecs: readonly CodecName[] = ['PCMU', 'PCMA']): string {
  const formats: Format[] = codecs.map((name) => ({ payloadType: CODECS.find((c) => c.name === name)?.payloadType ?? 0, name, rate: 8000 }));
  formats.push({ payloadType: DEFAULT_DTMF_PAYLOAD_TYPE, name: 'TELEPHONE-EVENT', rate: 8000 });
  return write(local, [mediaLine(local, formats, local.direction ?? 'sendrecv')]);
}

/** Our answer to an offer we negotiated: one m-line per offered one, the others refused with port 0. */
export function buildAnswer(offerText: string, negotiated: NegotiatedMedia & { mediaIndex: number }, local: LocalMedia): string {
  const offer = parse(offerText);
  const formats: Format[] = [{ payloadType: negotiated.payloadType, name: negotiated.codec, rate: 8000 }];
  if (negotiated.dtmfPayloadType !== null) formats.push({ payloadType: negotiated.dtmfPayloadType, name: 'TELEPHONE-EVENT', rate: 8000 });
  const media = offer.media.map((m, i): MediaDescription => {
    if (i === negotiated.mediaIndex) return mediaLine(local, formats, local.direction ?? negotiated.direction);
    // RFC 3264 §6: a refused stream keeps its place, with port 0 and the offered formats.
    return { type: m.type, port: 0, protocol: m.protocol, payloads: String(m.payloads ?? '').split(/\s+/)[0] ?? '0', rtp: [], fmtp: [] };
  });
  return write(local, media);
}

/** Reads the answer to our offer: the codec it picked must be one we offered. */
export function readAnswer(answerText: string, offered: readonly CodecName[] = ['PCMU', 'PCMA']): NegotiatedMedia {
  const session = parse(answerText);
  const line = audioLine(session);
  if (!line) throw new SdpNegotiationError('the answer accepts no audio stream');
  const formats = formatsOf(line.m);
  // RFC 3264 §6.1: the first format listed is the one the answerer will send.
  const chosen = formats.find((f) => offered.includes(f.name as CodecName) && f.rate === 8000);
  if (!chosen) throw new SdpNegotiationError('the answer names no codec we offered');
  return {
    codec: chosen.name as CodecName,
    payloadType: chosen.payloadType,
    dtmfPayloadType: dtmfOf(formats),
    direction: FLIP[directionOf(session, line.m)],
    ...remoteOf(session, line.m),
  };
}

/** Whether a description puts us on hold (the peer will not receive): for logs and events. */
export function isHold(negotiated: NegotiatedMedia): boolean {
  return negotiated.remoteAddress === null || negotiated.direction === 'recvonly' || negotiated.direction === 'inactive';
}

/** Reads back our own last description: where we receive and the o= numbers. */
function localOf(ourSdp: string): LocalMedia & { codec: CodecName | null } {
  const session = parse(ourSdp);
  const line = audioLine(session);
  const first = line ? formatsOf(line.m).find((f) => f.name === 'PCMU' || f.name === 'PCMA') : undefined;
  return {
    address: line?.m.connection?.ip ?? session.connection?.ip ?? session.origin?.address ?? '0.0.0.0',
    port: line?.m.port ?? 0,
    sessionId: Number(session.origin?.sessionId ?? 0),
    sessionVersion: Number(session.origin?.sessionVersion ?? 0),
    codec: (first?.name as CodecName | undefined) ?? null,
  };
}

const withoutOrigin = (sdp: string): string => sdp.replace(/^o=.*$/m, '');

/**
 * Answers an offer inside an existing session (re-INVITE or UPDATE: hold, resume, session
 * refresh): same address, port and codec when the offer still has it. The o= version goes
 * up only when the description changes (RFC 3264 §8).
 */
export function answerReoffer(offerText: string, ourSdp: string): { sdp: string; negotiated: NegotiatedMedia } {
  const local = localOf(ourSdp);
  const preference: CodecName[] = local.codec ? [local.codec, ...CODECS.map((c) => c.name).filter((n) => n !== local.codec)] : ['PCMU', 'PCMA'];
  const negotiated = negotiateOffer(offerText, preference);
  const { codec: _codec, ...media } = local;
  let sdp = buildAnswer(offerText, negotiated, media);
  if (withoutOrigin(sdp) !== withoutOrigin(ourSdp)) sdp = buildAnswer(offerText, negotiated, { ...media, sessionVersion: media.sessionVersion + 1 });
  return { sdp, negotiated };
}

