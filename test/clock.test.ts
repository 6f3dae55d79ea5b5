import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IsoTime, ManualClock } from '../src/clock.ts';

describe('IsoTime: the clock as ISO 8601 text, formatted once per millisecond', () => {
  it('follows the clock it reads, forwards and backwards, to the millisecond', () => {
    const clock = new ManualClock('2026-11-24T10:00:00.000Z');
    const time = new IsoTime(clock);
    assert.equal(time.now(), '2026-11-24T10:00:00.000Z');
    clock.advance(1);
    assert.equal(time.now(), '2026-11-24T10:00:00.001Z');
    clock.set('2025-01-02T03:04:05.678Z');
    assert.equal(time.now(), '2025-01-02T03:04:05.678Z');
    clock.advance(-678);
    assert.equal(time.now(), '2025-01-02T03:04:05.000Z');
  });

  it('gives the same text within one millisecond, and what toISOString gives', () => {
    const clock = new ManualClock('2026-11-24T10:00:00.250Z');
    const time = new IsoTime(clock);
    const first = time.now();
    assert.equal(time.now(), first);
    for (let ms = 0; ms < 2000; ms += 7) {
      clock.advance(7);
      assert.equal(time.now(), clock.now().toISOString());
    }
  });
});
