// Phone numbers are stored in E.164 so that deduplication, rate limits and SIP URIs all see
// one spelling per number. libphonenumber-js (with its full metadata, which knows the number
// types) does the numbering-plan work: country codes, lengths, the "(0)" trunk prefix written
// in international numbers ("+44 (0)20 …" drops the 0, "+39 (0)6 …" keeps it, as each plan
// says), and the type of a number (premium rate, shared cost…).
//
// What this wrapper adds, on purpose:
// - Only the characters people write numbers with: a leading "+", digits, spaces, dashes,
//   dots and parentheses. The library would also read letters ("1-800-FLOWERS"), other
//   scripts' digits and extensions; a dialler must not guess at those.
// - No "00" international prefix and no national numbers: "00" is not the exit code
//   everywhere (011 in NANP, 010 in Japan), and there is no default country to assume.
import { parsePhoneNumberFromString, type PhoneNumber } from 'libphonenumber-js/max';

/** How a number is written before the library reads it. `\s` takes tabs and no-break spaces too. */
const WRITTEN = /^\s*\+[\d\s\-.()]+$/;

export const INTERNATIONAL_FORMAT = 'must be a phone number in international format with its country code, such as +4930123456 (spaces, dashes, dots and parentheses are ignored)';

/** Number types a task never calls: the callee's operator charges the caller extra. */
const REFUSED_FOR_DIALING: Partial<Record<NonNullable<ReturnType<PhoneNumber['getType']>>, string>> = {
  PREMIUM_RATE: 'is a premium-rate number; tasks do not call premium-rate numbers',
  SHARED_COST: 'is a shared-cost number; tasks do not call shared-cost numbers',
};

function parse(input: unknown): PhoneNumber | null {
  if (typeof input !== 'string' || !WRITTEN.test(input)) return null;
  // The library reads plain spaces only; tabs and no-break spaces are spaces too.
  const parsed = parsePhoneNumberFromString(input.replace(/\s+/g, ' '));
  return parsed && !parsed.ext ? parsed : null;
}

/** The E.164 form ("+4930123456") of a possible international number, or null. */
export function normalizeE164(input: string): string | null {
  const parsed = parse(input);
  return parsed?.isPossible() ? parsed.number : null;
}

export type NumberCheck = { number: string; problem?: undefined } | { number?: undefined; problem: string };

/**
 * A number for one use, in E.164, or why it cannot be used:
 * - `own`: one of the organization's own numbers (a SIP number): any valid number, of any type.
 * - `dial`: a number a task will call: it must be possible (the right length for its country),
 *   and not premium rate or shared cost. A possible number the metadata does not know as valid
 *   is let through: the call itself fails as an invalid number, without retry, if it is one.
 */
export function checkNumber(input: string, use: 'own' | 'dial'): NumberCheck {
  const parsed = parse(input);
  if (!parsed) return { problem: INTERNATIONAL_FORMAT };
  if (!parsed.isPossible()) return { problem: `is not a possible number: wrong length for country code +${parsed.countryCallingCode}` };
  if (use === 'own') {
    return parsed.isValid() ? { number: parsed.number } : { problem: `is not a valid number in the numbering plan of country code +${parsed.countryCallingCode}` };
  }
  const type = parsed.getType();
  const refused = type ? REFUSED_FOR_DIALING[type] : undefined;
  return refused ? { problem: refused } : { number: parsed.number };
}
