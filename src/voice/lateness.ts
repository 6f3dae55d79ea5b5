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

/**
 * Where a histogram keeps its figures: `[count, max]` as two float64 from byte 0, then the bins
 * as uint32 from `binsOffset`. Memory in this layout can be shared with another thread that
 * records into it (the RTP media thread does).
 */
export const HISTOGRAM_LAYOUT = { binMs: BIN_MS, bins: BINS, binsOffset: 16, bytes: 16 + (BINS + 1) * 4 } as const;

export class LatenessHistogram {
  private readonly totals: Float64Array;
  private readonly bins: Uint32Array;

  constructor(memory: ArrayBufferLike = new ArrayBuffer(HISTOGRAM_LAYOUT.bytes)) {
    this.totals = new Float64Array(memory, 0, 2);
    this.bins = new Uint32Array(memory, HISTOGRAM_LAYOUT.binsOffset, BINS + 1);
  }

  private get count(): number {
    return this.totals[0] as number;
  }

  private get max(): number {
    return this.totals[1] as number;
  }

  record(lateMs: number): void {
    const late = lateMs > 0 ? lateMs : 0; // a timer may fire a fraction of a millisecond early
    const bin = Math.min(BINS, Math.floor(late / BIN_MS));
    this.bins[bin] = (this.bins[bin] as number) + 1;
    this.totals[0] = this.count + 1;
    if (late > this.max) this.totals[1] = late;
  }

  stats(): LatenessStats {
    return { frames: this.count, p50Ms: this.percentile(0.5), p99Ms: this.percentile(0.99), maxMs: this.max };
  }

  reset(): void {
    this.bins.fill(0);
    this.totals.fill(0);
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
