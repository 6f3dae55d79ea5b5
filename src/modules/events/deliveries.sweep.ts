import type { Context } from '../../context.ts';
import type { Sweep } from '../../jobs/runner.ts';
import { bumpCounters, deliveryCounter } from './deliveries.repository.ts';

const BATCH = 1_000;
const DAY_MS = 86_400_000;

/**
 * Retention of the delivery log: deliveries that settled (delivered or failed for good) longer
 * ago than PARLEY_DELIVERY_RETENTION_DAYS go, with their attempts, in batches, each with its
 * list counters; endpoint circuit records that closed a day ago go too.
 */
export function deliveriesSweep(ctx: Context): Sweep {
  const { kysely } = ctx.db;
  return {
    name: 'webhook_deliveries_retention',
    everyMs: 10 * 60_000,
    async run(now) {
      const cutoff = new Date(now.getTime() - ctx.config.deliveryRetentionMs).toISOString();
      let removed = 0;
      for (;;) {
        const n = await kysely.transaction().execute(async (trx) => {
          const rows = await trx.selectFrom('webhook_deliveries').select(['id', 'organization_id', 'status', 'hook_id', 'event_type'])
            .where('status', 'in', ['delivered', 'failed']).where('updated_at', '<', cutoff).limit(BATCH).execute();
          if (!rows.length) return 0;
          await trx.deleteFrom('webhook_deliveries').where('id', 'in', rows.map((r) => r.id)).execute();
          const deltas = new Map<string, number>();
          const less = (key: string) => deltas.set(key, (deltas.get(key) ?? 0) - 1);
          for (const row of rows) {
            less(deliveryCounter(row.organization_id));
            less(deliveryCounter(row.organization_id, ['status', row.status]));
            less(deliveryCounter(row.organization_id, ['hookId', row.hook_id]));
            less(deliveryCounter(row.organization_id, ['eventType', row.event_type]));
          }
          await bumpCounters(trx, deltas);
          return rows.length;
        });
        removed += n;
        if (n < BATCH) break;
      }
      const closedBefore = new Date(now.getTime() - DAY_MS).toISOString();
      await kysely.deleteFrom('webhook_endpoints')
        .where('updated_at', '<', closedBefore)
        .where((eb) => eb.or([eb('open_until', 'is', null), eb('open_until', '<', now.toISOString())]))
        .execute();
      return removed;
    },
  };
}
