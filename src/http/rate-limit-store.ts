import type { Clock } from '../clock.ts';
import type { Db } from '../db/database.ts';

interface Local {
  window: number;
  /** Requests this process may still serve from quota it has already taken from the database. */
  granted: number;
  /** What the database says the whole fleet has taken, as of this process's last claim. */
  takenFleetWide: number;
}

type Callback = (err: Error | null, result?: { current: number; ttl: number }) => void;

const MAX_KEYS = 50_000;

/**
 * A store for @fastify/rate-limit that keeps the quota of each window in the database, so
 * every process of a fleet shares one limit. A process takes the quota in chunks (a twentieth
 * of the limit) and serves requests from its chunk without a round trip: the fleet can never
 * pass the limit, and a process may refuse a little early while others hold unspent chunks.
 * Windows are aligned to the clock (the minute), read from the app's one clock.
 */
export class FleetQuotaStore {
  private readonly local = new Map<string, Local>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  incr(key: string, callback: Callback): void {
    this.take(key).then((result) => callback(null, result), (err: unknown) => callback(err as Error));
  }

  child(): FleetQuotaStore {
    return this;
  }

  /** Seconds until the window of `now` ends. */
  resetSeconds(now: number): number {
    const window = Math.floor(now / this.windowMs) * this.windowMs;
    return Math.max(1, Math.ceil((window + this.windowMs - now) / 1000));
  }

  private async take(key: string): Promise<{ current: number; ttl: number }> {
    const now = this.clock.now().getTime();
    const window = Math.floor(now / this.windowMs) * this.windowMs;
    const ttl = window + this.windowMs - now;
    let state = this.local.get(key);
    if (!state || state.window !== window) {
      state = { window, granted: 0, takenFleetWide: 0 };
      this.local.delete(key);
      this.local.set(key, state);
      if (this.local.size > MAX_KEYS) this.local.delete(this.local.keys().next().value as string);
    }
    if (state.granted === 0) {
      const { got, taken } = await this.claim(key, window);
      state.granted = got;
      state.takenFleetWide = taken;
    }
    if (state.granted === 0) return { current: this.limit + 1, ttl };
    state.granted--;
    // What the fleet has used, counting this process's unspent chunk as unused.
    return { current: state.takenFleetWide - state.granted, ttl };
  }

  /** Takes up to a chunk of the window's quota, never past the limit (compare-and-swap on `used`). */
  private async claim(key: string, window: number): Promise<{ got: number; taken: number }> {
    const { kysely } = this.db;
    const chunk = Math.max(1, Math.floor(this.limit / 20));
    await kysely.insertInto('rate_limit_windows').values({ key, window_start: window, used: 0 })
      .onConflict((oc) => oc.columns(['key', 'window_start']).doNothing()).execute();
    for (let attempt = 0; attempt < 5; attempt++) {
      const row = await kysely.selectFrom('rate_limit_windows').select('used')
        .where('key', '=', key).where('window_start', '=', window).executeTakeFirstOrThrow();
      const used = Number(row.used);
      const n = Math.min(chunk, this.limit - used);
      if (n <= 0) return { got: 0, taken: used };
      const result = await kysely.updateTable('rate_limit_windows').set({ used: used + n })
        .where('key', '=', key).where('window_start', '=', window).where('used', '=', used).executeTakeFirst();
      if (Number(result.numUpdatedRows) === 1) return { got: n, taken: used + n };
    }
    return { got: 0, taken: this.limit };
  }
}
