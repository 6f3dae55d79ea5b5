import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/database.ts';
import { AppError } from './errors.ts';

export interface RateLimitOptions {
  db: Db;
  clock: Clock;
  /** Requests per token per window; 0 turns limiting off. */
  limit: number;
  windowMs: number;
}

interface Local {
  window: number;
  /** Requests this process may still serve from quota it has already taken from the database. */
  granted: number;
  /** What the database says the whole fleet has taken, as of this process's last claim. */
  takenFleetWide: number;
}

/**
 * Per-token rate limit, shared across processes: the quota of a window lives in the database,
 * and each process takes it in small chunks (a twentieth of the limit), serving requests from
 * its chunk without a round trip. The fleet can never pass the limit; a process may refuse a
 * little early while others hold unspent chunks. Answers 429 with Retry-After, and every
 * response carries RateLimit-Limit, -Remaining, -Reset and RateLimit-Policy.
 */
export const rateLimitPlugin = fp(
  async (app: FastifyInstance, opts: RateLimitOptions) => {
    if (opts.limit <= 0) return;
    const chunk = Math.max(1, Math.floor(opts.limit / 20));
    const local = new Map<string, Local>();
    const windowSeconds = Math.ceil(opts.windowMs / 1000);

    /** Takes up to a chunk of the window's quota, never past the limit (compare-and-swap on `used`). */
    async function claim(key: string, window: number): Promise<{ got: number; taken: number }> {
      const { kysely } = opts.db;
      await kysely.insertInto('rate_limit_windows').values({ key, window_start: window, used: 0 })
        .onConflict((oc) => oc.columns(['key', 'window_start']).doNothing()).execute();
      for (let attempt = 0; attempt < 5; attempt++) {
        const row = await kysely.selectFrom('rate_limit_windows').select('used')
          .where('key', '=', key).where('window_start', '=', window).executeTakeFirstOrThrow();
        const used = Number(row.used);
        const n = Math.min(chunk, opts.limit - used);
        if (n <= 0) return { got: 0, taken: used };
        const result = await kysely.updateTable('rate_limit_windows').set({ used: used + n })
          .where('key', '=', key).where('window_start', '=', window).where('used', '=', used).executeTakeFirst();
        if (Number(result.numUpdatedRows) === 1) return { got: n, taken: used + n };
      }
      return { got: 0, taken: opts.limit };
    }

    app.addHook('onRequest', async (request, reply) => {
      const principal = request.principal;
      if (!principal) return;
      const key = principal.kind === 'admin' ? 'admin' : principal.tokenId;
      const now = opts.clock.now().getTime();
      const window = Math.floor(now / opts.windowMs) * opts.windowMs;
      let state = local.get(key);
      if (!state || state.window !== window) {
        state = { window, granted: 0, takenFleetWide: 0 };
        local.set(key, state);
        if (local.size > 50_000) local.delete(local.keys().next().value as string);
      }
      if (state.granted === 0) {
        const { got, taken } = await claim(key, window);
        state.granted = got;
        state.takenFleetWide = taken;
      }
      const reset = Math.max(1, Math.ceil((window + opts.windowMs - now) / 1000));
      reply.header('ratelimit-policy', `${opts.limit};w=${windowSeconds}`);
      reply.header('ratelimit-limit', String(opts.limit));
      reply.header('ratelimit-reset', String(reset));
      if (state.granted === 0) {
        reply.header('ratelimit-remaining', '0');
        reply.header('retry-after', String(reset));
        throw new AppError(429, `Rate limit of ${opts.limit} requests per ${windowSeconds} s reached for this token`);
      }
      state.granted--;
      reply.header('ratelimit-remaining', String(Math.max(0, opts.limit - state.takenFleetWide + state.granted)));
    });
  },
  { name: 'parley-rate-limit', dependencies: ['parley-auth'] },
);
