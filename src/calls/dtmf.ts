import type { PacerClock } from '../voice/pacer-clock.ts';

/** One-shot timers (the shape of the pacer's clock, so tests drive both with a ManualPacerClock). */
export type Timers = Pick<PacerClock, 'setTimer' | 'clearTimer'>;

/** Keys gathered into one entry end after this long without another key. */
export const DTMF_GAP_MS = 1_500;
/** An entry this long ends at once (the most a `dtmf` frame may carry). */
export const MAX_GATHERED_KEYS = 32;
const KEY = /^[0-9*#A-D]$/;

/** What the LLM reads for an entry: words, and only the keys a keypad has, so nothing else can reach it. */
export const dtmfText = (keys: string): string => `the caller pressed ${[...keys].join(' ')}`;

/**
 * Gathers the caller's key presses into entries: an entry ends 1.5 s after its last key, at
 * `#`, or at 32 keys. Only 0-9, *, # and A-D pass (lower-case a-d are taken as upper-case);
 * anything else is refused and changes nothing.
 */
export class DtmfGather {
  private keys = '';
  private timer: unknown = null;

  constructor(
    private readonly timers: Timers,
    private readonly gathered: (keys: string) => void,
    private readonly gapMs = DTMF_GAP_MS,
  ) {}

  /** One key; false when it is not a keypad key. */
  press(key: string): boolean {
    const k = key.toUpperCase();
    if (!KEY.test(k)) return false;
    this.keys += k;
    this.stopTimer();
    if (k === '#' || this.keys.length >= MAX_GATHERED_KEYS) this.flush();
    else this.timer = this.timers.setTimer(this.gapMs, () => this.flush());
    return true;
  }

  /** Drops what is gathered and the timer (the call ends). */
  close(): void {
    this.stopTimer();
    this.keys = '';
  }

  private flush(): void {
    this.stopTimer();
    const keys = this.keys;
    this.keys = '';
    if (keys) this.gathered(keys);
  }

  private stopTimer(): void {
    if (this.timer !== null) this.timers.clearTimer(this.timer);
    this.timer = null;
  }
}
