import { InvalidArgumentError } from 'commander';
import { isUuid } from '../http/schemas.ts';

/**
 * Option values checked as they are parsed, so a wrong one is refused with what was expected
 * (commander prints "error: option '--x <v>' argument 'y' is invalid. <our message>").
 */
export function port(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new InvalidArgumentError('Expected a TCP port: an integer from 0 to 65535.');
  return n;
}


export function id(value: string): string {
  if (!isUuid(value)) throw new InvalidArgumentError('Expected an id: a UUID such as 0b6f1c1e-7a55-4f0e-9a34-2f1e4c3b9d10.');
  return value.toLowerCase();
}

export const DATE_FORMAT = 'an ISO 8601 date or date-time with a time zone, such as 2027-01-31 (midnight UTC) or 2027-01-31T17:00:00+01:00';
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/** A date as the API takes it (ISO 8601 in UTC); a date alone is its midnight UTC. Impossible dates (02-30) are refused. */
export function date(value: string): string {
  const text = value.trim();
  const iso = DATE.test(text) ? `${text}T00:00:00Z` : DATE_TIME.test(text) ? text : null;
  const at = iso === null ? NaN : Date.parse(iso);
  if (iso === null || Number.isNaN(at) || !isCalendarDay(iso.slice(0, 10))) throw new InvalidArgumentError(`Expected ${DATE_FORMAT}.`);
  return new Date(at).toISOString();
}

/** Date.parse rolls 2027-02-30 over to March; a date as written must exist. */
function isCalendarDay(day: string): boolean {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  const utc = new Date(Date.UTC(y, m - 1, d));
  return utc.getUTCFullYear() === y && utc.getUTCMonth() === m - 1 && utc.getUTCDate() === d;
}
