/** `{{ name }}` or `{{ name|default text }}`: the default is used when the call has no value for the name. */
const PLACEHOLDER = /\{\{\s*([^{}\s|]+)\s*(?:\|([^{}]*))?\}\}/g;

/** A user value as text: strings as they are, anything else as JSON (42, true, {"a":1}). */
function asText(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
}

export class TemplateTooLongError extends Error {
  constructor(readonly limit: number) {
    super(`expands to more than ${limit} characters`);
  }
}

export interface Filled {
  text: string;
  /** Placeholders left as they were: no value and no default (on a phone call the braces would be spoken). */
  unfilled: string[];
}

/**
 * Fills `{{name}}` from the values. The result is built piece by piece and refused as soon as
 * it passes `maxLength`, so a prompt of many placeholders filled with long values can never
 * take more memory than the limit.
 */
export function fillPlaceholders(text: string, values: Readonly<Record<string, unknown>>, maxLength = Number.MAX_SAFE_INTEGER): Filled {
  let out = '';
  let last = 0;
  const unfilled = new Set<string>();
  const append = (piece: string) => {
    if (out.length + piece.length > maxLength) throw new TemplateTooLongError(maxLength);
    out += piece;
  };
  for (const match of text.matchAll(PLACEHOLDER)) {
    const [whole, name = '', fallback] = match;
    append(text.slice(last, match.index));
    if (Object.hasOwn(values, name)) append(asText(values[name]));
    else if (fallback !== undefined) append(fallback.trim());
    else {
      unfilled.add(name);
      append(whole);
    }
    last = match.index + whole.length;
  }
  append(text.slice(last));
  return { text: out, unfilled: [...unfilled] };
}
