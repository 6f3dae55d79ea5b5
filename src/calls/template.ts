const PLACEHOLDER = /\{\{\s*([^{}\s]+)\s*\}\}/g;

/** A user value as text: strings as they are, anything else as JSON (42, true, {"a":1}). */
function asText(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
}

/** Fills `{{name}}` from the values; a placeholder without a value stays as it is. */
export function fillPlaceholders(text: string, values: Readonly<Record<string, unknown>>): string {
  return text.replace(PLACEHOLDER, (whole, name: string) => (Object.hasOwn(values, name) ? asText(values[name]) : whole));
}
