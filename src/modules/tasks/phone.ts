// Phone numbers for outbound tasks are stored in E.164 so that deduplication,
// rate limits and SIP URIs all see one spelling per number.
//
// Deliberately NOT accepted:
// - A leading "00" international prefix. "00" is the exit code in most of the
//   world but not everywhere (011 in NANP, 010 in Japan, 0011 in Australia),
//   and "00..." can also be a national number, so guessing could dial the wrong
//   party. Callers must send the "+".
// - The "(0)" trunk-prefix notation ("+44 (0)20 ..."). Stripping the brackets
//   would keep a 0 that must not be dialled, while dropping it would be wrong for
//   countries such as Italy whose numbers keep the 0; either guess risks a wrong
//   number, so it is refused.
// - Numbers without a country code: there is no default country to assume.

const SEPARATORS = /[\s\-.()]/g;
const E164 = /^\+[1-9]\d{6,14}$/;

/** The E.164 form ("+4930123456") of `input`, or null when it is not one. */
export function normalizeE164(input: string): string | null {
  if (typeof input !== 'string') return null;
  if (/\(\s*0\s*\)/.test(input)) return null;
  const compact = input.replace(SEPARATORS, '');
  return E164.test(compact) ? compact : null;
}
