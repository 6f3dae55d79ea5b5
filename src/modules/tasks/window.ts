// Allowed calling windows for agent tasks.
//
// Semantics (the scheduler and the API both rely on these):
// - A window is a set of local wall-clock hours: an instant is inside when the
//   clock on the wall in `timezone` (UTC when null) shows an hour in
//   [begin, begin + hours), wrapping past midnight. Both null = every hour.
// - DST: because the test is on the wall clock, a window loses the hour that a
//   spring-forward gap swallows (02:00+2h on that day runs 03:00–04:00) and
//   gains the hour a fall-back repeats (01:00+2h runs 01:00 first occurrence
//   until 03:00, three real hours). When the window opens inside a gap it opens
//   at the first instant after the gap; when it opens at a repeated time it
//   opens at the first occurrence. A window lying wholly inside a gap does not
//   happen that day.
// - onlyWeekdays: a window belongs to the local day it opens, so Friday
//   22:00–02:00 may still run at Saturday 01:00 while a window opening Sunday
//   22:00 does not run at all, not even at Monday 01:00. That keeps "the task
//   started on a weekday" true for the whole window, which is what the rule is for.

export interface TaskWindow {
  allowedHoursBegin: number | null;
  allowedHours: number | null;
  onlyWeekdays: boolean;
  timezone: string | null;
}

/** Local date and hour, plus the whole wall-clock reading encoded as a UTC timestamp (second precision). */
interface Local { y: number; m: number; d: number; h: number; wall: number }

const DAY_MS = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat>();

// Constructing a DateTimeFormat is far slower than using one, and the scheduler
// evaluates many tasks per tick, so one formatter per zone is kept for good.
function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (f === undefined) {
    const n = 'numeric';
    f = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: n, month: n, day: n, hour: n, minute: n, second: n });
    formatters.set(timeZone, f);
  }
  return f;
}

function isUtc(tz: string | null): tz is null {
  return tz === null || tz === 'UTC';
}

function localParts(tz: string | null, ms: number): Local {
  if (isUtc(tz)) {
    const t = new Date(ms);
    const wall = Math.floor(ms / 1000) * 1000;
    return { y: t.getUTCFullYear(), m: t.getUTCMonth() + 1, d: t.getUTCDate(), h: t.getUTCHours(), wall };
  }
  const f = formatter(tz);
  // format() is ~3x cheaper than formatToParts(); the parts are only a fallback
  // should some ICU build render the en-US pattern differently.
  const m = WALL.exec(f.format(ms));
  const v = m === null ? fromParts(f, ms) : m.slice(1).map(Number);
  const [mo = 0, d = 0, y = 0, hh = 0, mi = 0, se = 0] = v;
  // Some ICU versions render midnight as 24 even with h23; normalise it.
  const h = hh % 24;
  return { y, m: mo, d, h, wall: Date.UTC(y, mo - 1, d, h, mi, se) };
}

const WALL = /^(\d+)\/(\d+)\/(\d+), (\d+):(\d+):(\d+)$/;
const PART_ORDER = ['month', 'day', 'year', 'hour', 'minute', 'second'];

function fromParts(f: Intl.DateTimeFormat, ms: number): number[] {
  const v = [0, 0, 0, 0, 0, 0];
  for (const part of f.formatToParts(ms)) {
    const i = PART_ORDER.indexOf(part.type);
    if (i >= 0) v[i] = Number(part.value);
  }
  return v;
}

function offsetAt(tz: string | null, ms: number): number {
  const s = Math.floor(ms / 1000) * 1000;
  return localParts(tz, s).wall - s;
}

/** The first instant whose wall-clock reading is >= `wall` (first occurrence / end of gap). */
function resolveLocal(tz: string | null, wall: number): number {
  if (isUtc(tz)) return wall;
  // The offsets a day either side bracket any single transition near `wall`.
  const before = offsetAt(tz, wall - DAY_MS);
  const after = offsetAt(tz, wall + DAY_MS);
  const candidates = before === after ? [wall - before] : [wall - before, wall - after];
  const hits = candidates.filter((t) => localParts(tz, t).wall === wall);
  if (hits.length > 0) return Math.min(...hits);
  // In a gap: binary-search the transition, to the second, between the two readings.
  let lo = Math.floor(Math.min(wall - after, wall - before) / 1000);
  let hi = Math.ceil(Math.max(wall - after, wall - before) / 1000);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (localParts(tz, mid * 1000).wall >= wall) hi = mid;
    else lo = mid;
  }
  return hi * 1000;
}

interface Span { begin: number; hours: number }

function span(w: TaskWindow): Span {
  const { allowedHoursBegin: begin, allowedHours: hours } = w;
  if (begin === null && hours === null) return { begin: 0, hours: 24 };
  if (begin !== null && hours !== null && Number.isInteger(begin) && Number.isInteger(hours)) {
    if (begin >= 0 && begin <= 23 && hours >= 1 && hours <= 24) return { begin, hours };
  }
  // The API validates; reaching here with a bad window is a programming error,
  // and guessing a window would call people at hours nobody allowed.
  const problem = windowProblems({ allowedHoursBegin: begin, allowedHours: hours })[0];
  throw new RangeError(`invalid task window: ${problem?.path ?? ''} ${problem?.message ?? ''}`);
}

function openAt(w: TaskWindow, s: Span, local: Local): boolean {
  const into = (local.h - s.begin + 24) % 24;
  if (into >= s.hours) return false;
  if (!w.onlyWeekdays) return true;
  // The window belongs to the day it opened: the previous day for the part after midnight.
  const weekday = new Date(Date.UTC(local.y, local.m - 1, local.d - (local.h < s.begin ? 1 : 0))).getUTCDay();
  return weekday >= 1 && weekday <= 5;
}

/** Is `now` inside an allowed window? */
export function isOpen(window: TaskWindow, now: Date): boolean {
  return openAt(window, span(window), localParts(window.timezone, now.getTime()));
}

/** `now` when open, else the next instant the window opens (never more than ~8 days ahead). */
export function nextOpening(window: TaskWindow, now: Date): Date {
  const s = span(window);
  const tz = window.timezone;
  const ms = now.getTime();
  const local = localParts(tz, ms);
  if (openAt(window, s, local)) return now;
  // When closed, the next open instant is a window start; try the next days' starts in
  // order. A day whose start is closed (weekend, or swallowed by a DST gap) is skipped.
  for (let k = 0; k <= 8; k++) {
    const start = resolveLocal(tz, Date.UTC(local.y, local.m - 1, local.d + k, s.begin));
    if (start > ms && openAt(window, s, localParts(tz, start))) return new Date(start);
  }
  throw new RangeError('task window never opens');
}

export function isValidTimeZone(tz: string): boolean {
  // Offsets such as "+01:00" are not IANA names, and only newer ICU accepts them.
  if (typeof tz !== 'string' || tz === '' || /^[+-]/.test(tz)) return false;
  try {
    formatter(tz);
    return true;
  } catch {
    return false;
  }
}

/** Validation for the API layer: every problem with its field path; empty when fine. */
export function windowProblems(window: Partial<TaskWindow>): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = [];
  const begin = window.allowedHoursBegin ?? null;
  const hours = window.allowedHours ?? null;
  if (begin !== null && !(Number.isInteger(begin) && begin >= 0 && begin <= 23)) {
    problems.push({ path: 'allowedHoursBegin', message: 'must be an integer from 0 to 23' });
  }
  if (hours !== null && !(Number.isInteger(hours) && hours >= 1 && hours <= 24)) {
    problems.push({ path: 'allowedHours', message: 'must be an integer from 1 to 24' });
  }
  if (begin !== null && hours === null) {
    problems.push({ path: 'allowedHours', message: 'must be set when allowedHoursBegin is set' });
  }
  if (begin === null && hours !== null) {
    problems.push({ path: 'allowedHoursBegin', message: 'must be set when allowedHours is set' });
  }
  const tz = window.timezone ?? null;
  if (tz !== null && !isValidTimeZone(tz)) {
    problems.push({ path: 'timezone', message: 'must be a known IANA time zone name' });
  }
  if (window.onlyWeekdays !== undefined && typeof window.onlyWeekdays !== 'boolean') {
    problems.push({ path: 'onlyWeekdays', message: 'must be a boolean' });
  }
  return problems;
}
