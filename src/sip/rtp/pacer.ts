// A drift-corrected periodic timer: tick n is due at start + n * interval, so lateness
// of one tick does not push back the next. Ticks that fell due while the event loop was
// busy run back to back (frames must not be lost), up to MAX_CATCH_UP; beyond that the
// schedule jumps ahead and the missed ticks are counted instead.

const MAX_CATCH_UP = 10;

export interface PacerTick {
  /** How late this tick ran, in ms (>= 0). */
  lateMs: number;
  index: number;
}

export class Pacer {
  #timer: NodeJS.Timeout | undefined;
  #start = 0;
  #index = 0;
  #running = false;
  /** Ticks given up because the loop was blocked for longer than MAX_CATCH_UP intervals. */
  skipped = 0;

  constructor(
    private readonly intervalMs: number,
    private readonly onTick: (tick: PacerTick) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get running(): boolean {
    return this.#running;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#start = this.now();
    this.#index = 0;
    this.#schedule();
  }

  stop(): void {
    this.#running = false;
    clearTimeout(this.#timer);
  }

  #schedule(): void {
    const due = this.#start + (this.#index + 1) * this.intervalMs;
    this.#timer = setTimeout(() => this.#fire(), Math.max(0, due - this.now()));
  }

  #fire(): void {
    if (!this.#running) return;
    const now = this.now();
    const behind = Math.floor((now - this.#start) / this.intervalMs) - this.#index;
    if (behind > MAX_CATCH_UP) {
      this.skipped += behind - MAX_CATCH_UP;
      this.#index += behind - MAX_CATCH_UP;
    }
    // Every tick that is due by now runs, in order.
    while (this.#running && this.#start + (this.#index + 1) * this.intervalMs <= now + 0.5) {
      this.#index += 1;
      this.onTick({ lateMs: Math.max(0, now - (this.#start + this.#index * this.intervalMs)), index: this.#index });
    }
    if (this.#running) this.#schedule();
  }
}
