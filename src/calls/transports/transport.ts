import type { ServerFrame } from '../frames.ts';

/**
 * How a call was connected: the call record's `transport`, and (without `callingNumberRaw`)
 * the `transport` object of every tool webhook request (interface.md). SIP adds the numbers; a
 * caller who withheld theirs is `anonymous`.
 */
export type TransportInfo =
  | { type: 'websocket'; clientTools?: true }
  | { type: 'sip'; calledNumber: string; callingNumber: string; callingNumberRaw?: string };

/**
 * The SIP transport object; a withheld or missing caller number becomes the literal
 * `anonymous`. `callingNumberRaw` keeps what the trunk sent when the number was read from it
 * differently (bare digits read as international): the record shows it, tool webhooks do not.
 */
export function sipTransportInfo(calledNumber: string, callingNumber: string | null | undefined, callingNumberRaw?: string): TransportInfo {
  const calling = callingNumber?.trim();
  if (!calling || calling.toLowerCase() === 'anonymous') return { type: 'sip', calledNumber, callingNumber: 'anonymous' };
  return { type: 'sip', calledNumber, callingNumber: calling, ...(callingNumberRaw ? { callingNumberRaw } : {}) };
}

/** The transport object of a tool webhook request: exactly the fields interface.md fixes. */
export function webhookTransport(info: TransportInfo): TransportInfo {
  return info.type === 'sip' ? { type: 'sip', calledNumber: info.calledNumber, callingNumber: info.callingNumber } : { type: info.type };
}

/** What a transport can do beyond frames; absent on transports that cannot (the WebSocket). */
export interface CallControl {
  /** Blind transfer of the far party to an E.164 number or sip: URI. */
  transfer(destination: string): Promise<{ ok: true } | { ok: false; reason: string }>;
  /** Plays DTMF to the far end (RFC 4733 on SIP); `,` and `w` are 500 ms pauses. */
  sendDtmf(digits: string): Promise<void>;
}

/** What a call session needs from the connection that carries it (a WebSocket, a SIP call). */
export interface CallTransport {
  readonly info: TransportInfo;
  send(frame: ServerFrame): void;
  /** Closes the connection after the last frame; safe to call twice. */
  close(): void;
  /** Transfer and DTMF out, on transports that can (SIP); the session offers those tools only then. */
  readonly control?: CallControl;
}
