// What a header line may contain. Control characters are never legal in a SIP head, except as
// the escaped character of a quoted-pair inside a quoted string (RFC 3261 §25.1: `"\" (%x00-09 /
// %x0B-0C / %x0E-7F)`), which RFC 4475's intmeth message exercises with BEL, NUL and DEL.

/** Header lines of one message (after the start line); more are refused before any is parsed. */
export const MAX_HEADER_LINES = 256;

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL_RE = /[\x00-\x08\x0a-\x1f\x7f]/;
const BACKSLASH = 0x5c;
const QUOTE = 0x22;

const isControl = (code: number): boolean => (code < 0x20 && code !== 0x09) || code === 0x7f;

/**
 * Whether `text` holds a control character (HT aside) outside a quoted-pair. CR and LF are never
 * allowed, not even escaped, so a bare CR cannot be smuggled past line splitting.
 */
export function hasBareControl(text: string): boolean {
  if (!CONTROL_RE.test(text)) return false; // the common case, without a character loop
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (quoted && code === BACKSLASH) {
      const next = text.charCodeAt(i + 1);
      if (next === 0x0d || next === 0x0a) return true;
      i++;
      continue;
    }
    if (code === QUOTE) quoted = !quoted;
    else if (isControl(code)) return true;
  }
  return false;
}
