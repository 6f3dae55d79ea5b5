import type { Context } from '../context.ts';
import type { Sweep } from '../jobs/runner.ts';
import { IDEMPOTENCY_TTL_MS } from './idempotency.ts';

/** Idempotency keys are replayed for 24 hours; after that they go. */
export function idempotencySweep(ctx: Context): Sweep {
  return {
    name: 'idempotency_keys_expiry',
    everyMs: 10 * 60_000,
    async run(now) {
      const result = await ctx.db.kysely.deleteFrom('idempotency_keys')
        .where('created_at', '<', new Date(now.getTime() - IDEMPOTENCY_TTL_MS).toISOString()).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

/** Rate-limit windows are only read while current; a window two windows old is gone. */
export function rateLimitSweep(ctx: Context, windowMs: number): Sweep {
  return {
    name: 'rate_limit_windows_expiry',
    everyMs: 60_000,
    async run(now) {
      const result = await ctx.db.kysely.deleteFrom('rate_limit_windows')
        .where('window_start', '<', now.getTime() - 2 * windowMs).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
