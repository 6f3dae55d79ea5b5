/**
 * How late frames were sent, as a fixed histogram (0.1 ms bins up to 2 s; percentiles are the
 * lower edge of their bin, so 0.1 ms is the resolution), so recording a frame
 * allocates nothing and percentiles cost one pass over the bins.
 */
const BIN_MS = 0.1;
const BINS = 20_000;

export interface LatenessStats {
  frames: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export class LatenessHistogram {
  private readonly bins = new Uint32Array(BINS + 1);
  private count = 0;
  private max = 0;

  record(lateMs: number): void {
    const late = lateMs > 0 ? lateMs : 0; // a timer may fire a fraction of a millisecond early
    const bin = Math.min(BINS, Math.floor(late / BIN_MS));
    this.bins[bin] = (this.bins[bin] as number) + 1;
    this.count++;
    if (late > this.max) this.max = late;
  }

  stats(): LatenessStats {
    return { frames: this.count, p50Ms: this.percentile(0.5), p99Ms: this.percentile(0.99), maxMs: this.max };
  }

  reset(): void {
    this.bins.fill(0);
    this.count = 0;
    this.max = 0;
  }

  private percentile(p: number): number {
    if (this.count === 0) return 0;
    const rank = Math.ceil(p * this.count);
    let seen = 0;
    for (let bin = 0; bin <= BINS; bin++) {
      seen += this.bins[bin] as number;
      if (seen >= rank) return bin === BINS ? this.max : bin * BIN_MS;
    }
    return this.max;
  }
}
