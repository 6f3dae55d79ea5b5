// RFC 4733 telephone-events: the 4-byte payload, one digit per key press on the way in
// (an event is its RTP timestamp; repeats and the three end packets are dropped), and
// the packet sequence for one key press on the way out.
import { digitOfEvent, eventOfDigit } from '../bodies.ts';
import { RtpParseError } from './packet.ts';

export interface DtmfEvent {
  event: number;
  end: boolean;
  volume: number;
  /** In timestamp units (1/8000 s). */
  duration: number;
}

export function parseDtmfPayload(payload: Buffer): DtmfEvent {
  if (payload.length < 4) throw new RtpParseError(`telephone-event payload of ${payload.length} bytes`);
  const flags = payload[1] ?? 0;
  return { event: payload[0] ?? 0, end: (flags & 0x80) !== 0, volume: flags & 0x3f, duration: payload.readUInt16BE(2) };
}

export function buildDtmfPayload(e: DtmfEvent): Buffer {
  const buf = Buffer.alloc(4);
  buf[0] = e.event;
  buf[1] = (e.end ? 0x80 : 0) | (e.volume & 0x3f);
  buf.writeUInt16BE(Math.min(e.duration, 0xffff), 2);
  return buf;
}

/** Turns a stream of telephone-event packets into one digit per key press. */
export class DtmfReceiver {
  // The last few event timestamps: enough to drop late repeats, small enough to stay bounded.
  readonly #seen: number[] = [];

  /** The digit when this packet starts a new event, else null. */
  push(timestamp: number, payload: Buffer): { digit: string; durationMs: number } | null {
    const e = parseDtmfPayload(payload);
    if (this.#seen.includes(timestamp)) return null;
    this.#seen.push(timestamp);
    if (this.#seen.length > 16) this.#seen.shift();
    const digit = digitOfEvent(e.event);
    return digit ? { digit, durationMs: e.duration / 8 } : null;
  }
}

/** The payloads for one key press: updates every 20 ms, then the end packet three times. */
export function dtmfPackets(digit: string, durationMs: number, volume = 10): DtmfEvent[] {
  const event = eventOfDigit(digit);
  if (event === null) throw new TypeError(`not a DTMF digit: ${JSON.stringify(digit)}`);
  const steps = Math.max(2, Math.round(durationMs / 20));
  const out: DtmfEvent[] = [];
  for (let i = 1; i < steps; i++) out.push({ event, end: false, volume, duration: i * 160 });
  for (let i = 0; i < 3; i++) out.push({ event, end: true, volume, duration: steps * 160 });
  return out;
}
