// Per-source token buckets for incoming SIP traffic. The table of sources is bounded:
// when full, the source seen longest ago is forgotten (a Map keeps insertion order, and
// every touch re-inserts), so a flood from many addresses cannot grow memory.

export interface RateLimitOptions {
  /** Sustained messages per second from one address. */
  perSecond: number;
  /** Messages one address may send in a burst. */
  burst: number;
  /** Addresses remembered at once. */
  maxSources: number;
  /** Monotonic milliseconds; injectable for tests. */
  now?: () => number;
}

// A trunk carries every call from one address: 500/s is some 50 new calls a second with room for
// their ACKs, BYEs and retransmissions. Raise it for bigger trunks.
export const DEFAULT_RATE_LIMIT: RateLimitOptions = { perSecond: 500, burst: 1000, maxSources: 10_000 };

interface Bucket {
  tokens: number;
  at: number;
}

export class SourceRateLimiter {
  readonly #buckets = new Map<string, Bucket>();
  readonly #now: () => number;
  #dropped = 0;

  constructor(private readonly options: RateLimitOptions = DEFAULT_RATE_LIMIT) {
    this.#now = options.now ?? (() => performance.now());
  }

  /** Messages refused so far (for metrics and logs). */
  get dropped(): number {
    return this.#dropped;
  }

  get sources(): number {
    return this.#buckets.size;
  }

  allow(address: string): boolean {
    const now = this.#now();
    const { perSecond, burst, maxSources } = this.options;
    const found = this.#buckets.get(address);
    const bucket = found ?? { tokens: burst, at: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * perSecond);
    bucket.at = now;
    this.#buckets.delete(address);
    this.#buckets.set(address, bucket);
    if (!found && this.#buckets.size > maxSources) {
      const oldest = this.#buckets.keys().next().value;
      if (oldest !== undefined) this.#buckets.delete(oldest);
    }
    if (bucket.tokens < 1) {
      this.#dropped++;
      return false;
    }
    bucket.tokens -= 1;
    return true;
  }
}
