// Per-source token buckets for incoming SIP traffic, one for messages and one for bytes: parsing
// costs by the byte, so a source sending few but large messages is held to the same budget as
// one sending many small ones. The table of sources is bounded: when full, the source seen
// longest ago is forgotten (a Map keeps insertion order, and every touch re-inserts), so a flood
// from many addresses cannot grow memory.

export interface RateLimitOptions {
  /** Sustained messages per second from one address. */
  perSecond: number;
  /** Messages one address may send in a burst. */
  burst: number;
  /** Sustained bytes per second from one address. */
  bytesPerSecond: number;
  /** Bytes one address may send in a burst (at least one message of the 64 KiB cap). */
  burstBytes: number;
  /** Addresses remembered at once. */
  maxSources: number;
  /** Monotonic milliseconds; injectable for tests. */
  now?: () => number;
}

// A trunk carries every call from one address: 500/s is some 50 new calls a second with room for
// their ACKs, BYEs and retransmissions, and 1 MiB/s is 2 KiB for each of those messages (an INVITE
// with SDP is about 1 KiB). Raise both for bigger trunks.
export const DEFAULT_RATE_LIMIT: RateLimitOptions = { perSecond: 500, burst: 1000, bytesPerSecond: 1024 * 1024, burstBytes: 2 * 1024 * 1024, maxSources: 10_000 };

interface Bucket {
  tokens: number;
  bytes: number;
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

  /** Whether a message of `bytes` from `address` is within its budget (and takes it from the budget). */
  allow(address: string, bytes = 0): boolean {
    const now = this.#now();
    const { perSecond, burst, bytesPerSecond, burstBytes, maxSources } = this.options;
    const found = this.#buckets.get(address);
    const bucket = found ?? { tokens: burst, bytes: burstBytes, at: now };
    const elapsed = (now - bucket.at) / 1000;
    bucket.tokens = Math.min(burst, bucket.tokens + elapsed * perSecond);
    bucket.bytes = Math.min(burstBytes, bucket.bytes + elapsed * bytesPerSecond);
    bucket.at = now;
    this.#buckets.delete(address);
    this.#buckets.set(address, bucket);
    if (!found && this.#buckets.size > maxSources) {
      const oldest = this.#buckets.keys().next().value;
      if (oldest !== undefined) this.#buckets.delete(oldest);
    }
    if (bucket.tokens < 1 || bucket.bytes < bytes) {
      this.#dropped++;
      return false;
    }
    bucket.tokens -= 1;
    bucket.bytes -= bytes;
    return true;
  }
}
