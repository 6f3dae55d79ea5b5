import { normalizeE164 } from './phone.ts';

/**
 * The number a Twilio call dialled, from its `To` parameter: an E.164 number (`+4930123456`), or
 * for a call to a Twilio SIP domain the user part of the SIP URI (`sip:+4930123456@…`). Null
 * when it is not a telephone number.
 */
export function dialledNumber(to: string): string | null {
  const user = /^sips?:([^@;]+)/i.exec(to.trim())?.[1] ?? to;
  // A SIP URI may carry the plus escaped.
  return normalizeE164(user.replace(/^%2B/i, '+'));
}

/**
 * How Twilio passes on a withheld caller ID: as a word (`anonymous`, `restricted`, …), or, on
 * some legs, as those words spelled on a keypad (`+266696687` is ANONYMOUS). Kept lower case.
 */
const WITHHELD = new Set([
  'anonymous', 'restricted', 'unavailable', 'unknown', 'blocked', 'private', 'withheld',
  '+266696687', '+7378742833', '+86282452253', '+8656696', '+2562533',
]);

/**
 * The caller's number from Twilio's `From` (E.164, or as Twilio gave it: `sip:…`, `client:…`);
 * null when the caller withheld it, or it is not printable ASCII (the call then
 * says `anonymous`).
 */
export function callingNumber(from: string | undefined): string | null {
  const value = from?.trim() ?? '';
  if (!value || WITHHELD.has(value.toLowerCase()) || !/^[\x21-\x7e]{1,128}$/.test(value)) return null;
  return normalizeE164(value) ?? value;
}
