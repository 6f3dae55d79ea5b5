/**
 * The time source of the audio pacer: a monotonic clock in milliseconds and one-shot timers.
 * The process has one (`systemPacerClock`); tests drive a `ManualPacerClock`.
 */
export interface PacerClock {
  now(): number;
  /** `unref`: the timer does not keep the process alive (a call's idle and total limits). */
  setTimer(delayMs: number, fn: () => void, options?: { unref?: boolean }): unknown;
  clearTimer(handle: unknown): void;
}

export const systemPacerClock: PacerClock = {
  now: () => performance.now(),
  setTimer: (delayMs, fn, options) => {
    const timer = setTimeout(fn, Math.max(0, delayMs));
    if (options?.unref) timer.unref();
    return timer;
  },
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** A clock that moves only when told to, firing due timers in time order as it passes them. */
export class ManualPacerClock implements PacerClock {
  private current: number;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();
  private nextHandle = 1;

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(delayMs: number, fn: () => void): unknown {
    const handle = this.nextHandle++;
    this.timers.set(handle, { at: this.current + Math.max(0, delayMs), fn });
    return handle;
  }

  clearTimer(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  get pendingTimers(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, running each timer at its own time. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      let due: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.timers) if (entry[1].at <= target && (!due || entry[1].at < due[1].at)) due = entry;
      if (!due) break;
      this.timers.delete(due[0]);
      this.current = Math.max(this.current, due[1].at);
      due[1].fn();
    }
    this.current = target;
  }

  /** Moves time forward without firing anything: a stalled event loop. */
  stall(ms: number): void {
    this.current += ms;
  }
}
