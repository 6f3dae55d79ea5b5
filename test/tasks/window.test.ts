import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isOpen, isValidTimeZone, nextOpening, windowProblems, type TaskWindow } from '../../src/modules/tasks/window.ts';

function win(begin: number | null, hours: number | null, extra: Partial<TaskWindow> = {}): TaskWindow {
  return { allowedHoursBegin: begin, allowedHours: hours, onlyWeekdays: false, timezone: null, ...extra };
}
const at = (iso: string): Date => new Date(iso);
function next(w: TaskWindow, iso: string): string {
  return nextOpening(w, at(iso)).toISOString();
}
/** Asserts isOpen for each instant: names listed in `open` are open, those in `closed` are not. */
function expectOpen(w: TaskWindow, open: string[], closed: string[]): void {
  for (const iso of open) assert.equal(isOpen(w, at(iso)), true, `${iso} should be open`);
  for (const iso of closed) assert.equal(isOpen(w, at(iso)), false, `${iso} should be closed`);
}

describe('task window in UTC', () => {
  it('a null window is open at any time', () => {
    const w = win(null, null);
    const times = ['2024-01-06T00:00:00Z', '2024-01-07T13:37:00Z', '2024-06-30T23:59:59Z'];
    expectOpen(w, times, []);
    for (const iso of times) assert.equal(next(w, iso), at(iso).toISOString());
  });

  it('begin 9 + 8h is [09:00, 17:00)', () => {
    const w = win(9, 8);
    expectOpen(w, ['2024-01-10T09:00:00Z', '2024-01-10T16:59:59Z'], ['2024-01-10T08:59:59Z', '2024-01-10T17:00:00Z']);
    assert.equal(next(w, '2024-01-10T17:00:00Z'), '2024-01-11T09:00:00.000Z');
    assert.equal(next(w, '2024-01-10T08:59:00Z'), '2024-01-10T09:00:00.000Z');
    assert.equal(next(w, '2024-01-10T12:34:56.789Z'), '2024-01-10T12:34:56.789Z');
  });

  it('begin 22 + 4h wraps past midnight', () => {
    const w = win(22, 4);
    expectOpen(w, ['2024-01-10T23:00:00Z', '2024-01-11T01:59:59Z'], ['2024-01-10T21:59:59Z', '2024-01-11T02:00:00Z']);
    assert.equal(next(w, '2024-01-11T02:00:00Z'), '2024-01-11T22:00:00.000Z');
  });

  it('a 24-hour window is always open', () => {
    const halfHours = Array.from({ length: 96 }, (_, i) => new Date(Date.UTC(2024, 0, 10) + i * 1_800_000).toISOString());
    for (const w of [win(0, 24), win(7, 24), win(23, 24, { timezone: 'Europe/Berlin' })]) {
      expectOpen(w, halfHours, []);
      for (const iso of halfHours) assert.equal(next(w, iso), iso);
    }
  });

  it('onlyWeekdays skips the weekend (2024-01-12 is a Friday)', () => {
    const w = win(9, 8, { onlyWeekdays: true });
    expectOpen(w, ['2024-01-12T10:00:00Z'], ['2024-01-13T10:00:00Z', '2024-01-14T10:00:00Z']);
    for (const iso of ['2024-01-12T23:00:00Z', '2024-01-14T10:00:00Z']) assert.equal(next(w, iso), '2024-01-15T09:00:00.000Z');
  });

  it('a null window with onlyWeekdays opens at Monday 00:00', () => {
    const w = win(null, null, { onlyWeekdays: true });
    expectOpen(w, ['2024-01-12T23:00:00Z', '2024-01-15T00:00:00Z'], ['2024-01-13T00:00:00Z', '2024-01-14T23:59:59Z']);
    for (const iso of ['2024-01-13T00:00:00Z', '2024-01-14T23:59:59Z']) assert.equal(next(w, iso), '2024-01-15T00:00:00.000Z');
  });

  it('a wrapping window belongs to the weekday it opens on', () => {
    const w = win(22, 4, { onlyWeekdays: true });
    // Opened Friday 22:00, so it runs into Saturday morning. The ones opening on
    // Saturday and Sunday 22:00 never run, and Monday 01:00 is the tail of Sunday's.
    expectOpen(w, ['2024-01-12T23:00:00Z', '2024-01-13T01:00:00Z'], ['2024-01-13T23:00:00Z', '2024-01-14T23:00:00Z', '2024-01-15T01:00:00Z']);
    assert.equal(next(w, '2024-01-13T02:00:00Z'), '2024-01-15T22:00:00.000Z');
    assert.equal(next(w, '2024-01-15T01:00:00Z'), '2024-01-15T22:00:00.000Z');
    // A 24-hour window opening Friday 09:00 covers Saturday 08:59 but not 09:00.
    const day = win(9, 24, { onlyWeekdays: true });
    expectOpen(day, ['2024-01-13T08:59:00Z'], ['2024-01-13T09:00:00Z']);
    assert.equal(next(day, '2024-01-13T09:00:00Z'), '2024-01-15T09:00:00.000Z');
  });

  it('refuses to evaluate an invalid window rather than guess', () => {
    assert.throws(() => isOpen(win(9, null), at('2024-01-10T10:00:00Z')), RangeError);
    assert.throws(() => nextOpening(win(null, 8), at('2024-01-10T10:00:00Z')), RangeError);
    assert.throws(() => isOpen(win(9, 25), at('2024-01-10T10:00:00Z')), RangeError);
    assert.throws(() => isOpen(win(9, 8, { timezone: 'Mars/Olympus' }), at('2024-01-10T10:00:00Z')), RangeError);
  });
});

describe('task window in a time zone', () => {
  const berlin = win(9, 8, { timezone: 'Europe/Berlin' });

  it('Europe/Berlin 09:00–17:00 is 08:00–16:00 UTC in winter and 07:00–15:00 UTC in summer', () => {
    expectOpen(berlin, ['2024-01-10T08:00:00Z', '2024-01-10T15:59:59Z'], ['2024-01-10T07:59:59Z', '2024-01-10T16:00:00Z']);
    assert.equal(next(berlin, '2024-01-10T16:00:00Z'), '2024-01-11T08:00:00.000Z');
    expectOpen(berlin, ['2024-07-10T07:00:00Z', '2024-07-10T14:59:59Z'], ['2024-07-10T06:59:59Z', '2024-07-10T15:00:00Z']);
    assert.equal(next(berlin, '2024-07-10T15:00:00Z'), '2024-07-11T07:00:00.000Z');
  });

  it('judges weekdays in the task time zone, not in UTC', () => {
    const tokyo = win(null, null, { onlyWeekdays: true, timezone: 'Asia/Tokyo' });
    // Sunday 20:00 UTC is already Monday 05:00 in Tokyo.
    assert.equal(isOpen(tokyo, at('2024-01-14T20:00:00Z')), true);
    // Friday 15:00 UTC is Saturday 00:00 in Tokyo; Monday 00:00 JST is Sunday 15:00 UTC.
    assert.equal(isOpen(tokyo, at('2024-01-12T15:00:00Z')), false);
    assert.equal(next(tokyo, '2024-01-12T15:00:00Z'), '2024-01-14T15:00:00.000Z');
  });

  it('America/New_York spring forward: a start inside the gap moves to the end of the gap', () => {
    // 2024-03-10: 02:00 EST (07:00Z) jumps to 03:00 EDT; local 02:00–03:00 does not exist.
    const w = win(2, 2, { timezone: 'America/New_York' });
    assert.equal(next(w, '2024-03-10T05:00:00Z'), '2024-03-10T07:00:00.000Z');
    // Ends at 04:00 EDT by the wall clock: one real hour that day.
    expectOpen(w, ['2024-03-10T07:00:00Z', '2024-03-10T07:59:59Z'], ['2024-03-10T06:59:59Z', '2024-03-10T08:00:00Z']);
    assert.equal(next(w, '2024-03-10T08:00:00Z'), '2024-03-11T06:00:00.000Z');
    // A window wholly inside the gap does not happen that day.
    const lost = win(2, 1, { timezone: 'America/New_York' });
    assert.equal(next(lost, '2024-03-10T05:00:00Z'), '2024-03-11T06:00:00.000Z');
  });

  it('America/New_York fall back: an ambiguous start uses the first occurrence', () => {
    // 2024-11-03: 02:00 EDT (06:00Z) falls back to 01:00 EST; local 01:00–02:00 happens twice.
    const w = win(1, 2, { timezone: 'America/New_York' });
    assert.equal(next(w, '2024-11-03T04:00:00Z'), '2024-11-03T05:00:00.000Z');
    // The repeated hour is inside the window by the wall clock: three real hours.
    const inside = ['2024-11-03T05:00:00Z', '2024-11-03T06:30:00Z', '2024-11-03T07:59:59Z'];
    expectOpen(w, inside, ['2024-11-03T04:59:59Z', '2024-11-03T08:00:00Z']);
    assert.equal(next(w, '2024-11-03T08:00:00Z'), '2024-11-04T06:00:00.000Z');
  });

  it('Europe/Berlin spring forward: 02:00 does not exist on 2024-03-31', () => {
    // 02:00 CET (01:00Z) jumps to 03:00 CEST.
    const w = win(2, 2, { timezone: 'Europe/Berlin' });
    assert.equal(next(w, '2024-03-30T23:30:00Z'), '2024-03-31T01:00:00.000Z');
    expectOpen(w, ['2024-03-31T01:00:00Z', '2024-03-31T01:59:59Z'], ['2024-03-31T00:59:59Z', '2024-03-31T02:00:00Z']);
    const lost = win(2, 1, { timezone: 'Europe/Berlin' });
    assert.equal(next(lost, '2024-03-30T23:30:00Z'), '2024-04-01T00:00:00.000Z');
  });

  it('Europe/Berlin fall back: 02:00 happens twice on 2024-10-27', () => {
    // 03:00 CEST (01:00Z) falls back to 02:00 CET.
    const w = win(2, 1, { timezone: 'Europe/Berlin' });
    assert.equal(next(w, '2024-10-26T23:00:00Z'), '2024-10-27T00:00:00.000Z');
    expectOpen(w, ['2024-10-27T00:30:00Z', '2024-10-27T01:30:00Z'], ['2024-10-26T23:59:59Z', '2024-10-27T02:00:00Z']);
    assert.equal(next(w, '2024-10-27T02:00:00Z'), '2024-10-28T01:00:00.000Z');
  });

  it('a start strictly inside a two-hour gap opens at the end of the gap (Antarctica/Troll)', () => {
    // 2024-03-31 01:00Z: 01:00 +00 jumps to 03:00 +02, so local 02:00 is mid-gap.
    const w = win(2, 2, { timezone: 'Antarctica/Troll' });
    assert.equal(next(w, '2024-03-31T00:00:00Z'), '2024-03-31T01:00:00.000Z');
    expectOpen(w, ['2024-03-31T01:00:00Z', '2024-03-31T01:59:59Z'], ['2024-03-31T00:59:59Z', '2024-03-31T02:00:00Z']);
    // After the window the next start is tomorrow's 02:00 +02.
    assert.equal(next(w, '2024-03-31T02:00:00Z'), '2024-04-01T00:00:00.000Z');
  });

  it('nextOpening is always open, never in the past, never skips an opening, within 8 days', () => {
    const zones = [null, 'Europe/Berlin', 'Antarctica/Troll', 'Australia/Lord_Howe', 'America/Santiago', 'Asia/Kathmandu'];
    const shapes: [number | null, number | null][] = [[null, null], [0, 1], [2, 1], [9, 8], [22, 4], [23, 24]];
    const step = 97 * 60_000; // Odd step so samples drift across hour boundaries.
    for (const timezone of zones) {
      for (const [begin, hours] of shapes) {
        for (const onlyWeekdays of [false, true]) {
          const w = win(begin, hours, { timezone, onlyWeekdays });
          for (let t = Date.UTC(2024, 2, 28); t < Date.UTC(2024, 3, 10); t += step) {
            const open = nextOpening(w, new Date(t)).getTime();
            assert.ok(open >= t && open - t <= 8 * 86_400_000, `${timezone} ${begin}+${hours}`);
            assert.equal(isOpen(w, new Date(open)), true);
            if (open > t) assert.equal(isOpen(w, new Date(open - 1000)), false);
            for (let probe = t; probe < open; probe += 15 * 60_000) assert.equal(isOpen(w, new Date(probe)), false);
          }
        }
      }
    }
  });
});

describe('windowProblems', () => {
  const paths = (w: Partial<TaskWindow>): string[] => windowProblems(w).map((p) => p.path);

  it('accepts valid windows', () => {
    const valid = [{}, win(null, null), win(0, 24, { timezone: 'Europe/Berlin', onlyWeekdays: true }), win(23, 1, { timezone: 'UTC' })];
    for (const w of valid) assert.deepEqual(windowProblems(w), []);
  });

  it('requires both or neither of begin and hours', () => {
    for (const w of [{ allowedHoursBegin: 9 }, win(9, null)]) assert.deepEqual(paths(w), ['allowedHours']);
    for (const w of [{ allowedHours: 8 }, win(null, 8)]) assert.deepEqual(paths(w), ['allowedHoursBegin']);
  });

  it('checks ranges and integers', () => {
    for (const begin of [-1, 24, 9.5, Number.NaN]) assert.deepEqual(paths(win(begin, 8)), ['allowedHoursBegin'], String(begin));
    for (const hours of [0, 25, 1.5, -3]) assert.deepEqual(paths(win(9, hours)), ['allowedHours'], String(hours));
    assert.deepEqual(paths(win(24, 0)), ['allowedHoursBegin', 'allowedHours']);
    assert.deepEqual(paths(win(30, null)), ['allowedHoursBegin', 'allowedHours']);
  });

  it('checks the time zone', () => {
    for (const timezone of ['Mars/Olympus', '', '+01:00']) assert.deepEqual(paths({ timezone }), ['timezone'], timezone);
    assert.deepEqual(paths({ timezone: null }), []);
    assert.match(windowProblems({ timezone: 'Nowhere' })[0]?.message ?? '', /time zone/);
  });

  it('isValidTimeZone accepts IANA names only', () => {
    for (const tz of ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kathmandu']) assert.equal(isValidTimeZone(tz), true, tz);
    for (const tz of ['', 'Mars/Olympus', 'Europe/Berlinn', '+02:00', '-05:00']) assert.equal(isValidTimeZone(tz), false, tz);
  });
});
