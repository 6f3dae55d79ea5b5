import { normalizeE164 } from './phone.ts';

/**
 * A telephone number as trunks and Twilio write one, in E.164, or null: written with its `+`
 * (escaped `%2B` in a URI, too), or as the bare international digits many trunks send
 * (`4930123456`, read as `+4930123456`); a `sip:`/`sips:`/`tel:` URI stands for its user part.
 * The one reading of both numbers of a call, called and calling, whichever way it came in.
 */
export function readNumber(text: string): string | null {
  const user = (/^(?:sips?|tel):([^@;?]+)/i.exec(text.trim())?.[1] ?? text).trim().replace(/^%2B/i, '+');
  if (/^\d{6,15}$/.test(user)) return normalizeE164(`+${user}`);
  return normalizeE164(user);
}

/**
 * The number a Twilio call dialled, from its `To` parameter: an E.164 number (`+4930123456`), or
 * for a call to a Twilio SIP domain the user part of the SIP URI (`sip:+4930123456@…`). Null
 * when it is not a telephone number.
 */
export const dialledNumber = (to: string): string | null => readNumber(to);

/**
 * How Twilio passes on a withheld caller ID: as a word (`anonymous`, `restricted`, …), or, on
 * some legs, as those words spelled on a keypad (`+266696687` is ANONYMOUS). Kept lower case.
 */
const WITHHELD = new Set([
  'anonymous', 'restricted', 'unavailable', 'unknown', 'blocked', 'private', 'withheld',
  '+266696687', '+7378742833', '+86282452253', '+8656696', '+2562533',
]);

/** The caller's number, and what the trunk or Twilio sent when that was read differently. */
export interface CallingNumber {
  number: string;
  /** As sent, when `number` is a reading of it (bare digits, `%2B`, a URI); absent when the same. */
  raw?: string;
}

/**
 * The caller's number from a SIP From user or Twilio's `From`, read as readNumber reads the
 * called number (so `49176918682` is `+49176918682` on both sides), else kept as sent (`client:…`,
 * an account name); null when the caller withheld it, or it is not printable ASCII (the call
 * then says `anonymous`).
 */
export function callingNumber(from: string | undefined): CallingNumber | null {
  const value = from?.trim() ?? '';
  if (!value || WITHHELD.has(value.toLowerCase()) || !/^[\x21-\x7e]{1,128}$/.test(value)) return null;
  const number = readNumber(value);
  if (number === null || number === value) return { number: number ?? value };
  return { number, raw: value };
}
