/** Time, injected wherever behaviour depends on it, so tests can move it. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that only moves when told to. */
export class ManualClock implements Clock {
  private current: number;
  constructor(start: Date | string) {
    this.current = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.current);
  }
  set(to: Date | string): void {
    this.current = new Date(to).getTime();
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

/**
 * A clock's time as ISO 8601 text, formatted once per millisecond of that clock: Date's
 * toISOString costs about a microsecond on Node 20, and every answer carries the time
 * (docs/performance.md). One per app, like the clock it reads.
 */
export class IsoTime {
  #ms = Number.NaN;
  #text = '';

  constructor(private readonly clock: Clock) {}

  now(): string {
    const ms = this.clock.now().getTime();
    if (ms !== this.#ms) {
      this.#text = new Date(ms).toISOString();
      this.#ms = ms;
    }
    return this.#text;
  }
}
