import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { conflict, notFound } from '../../http/errors.ts';
import { hooksOf } from '../assistants/assistants.repository.ts';
import { bumpCounters, findDelivery, inFlight, rescheduleIfIdle, statusChange, type DeliveryRow } from './deliveries.repository.ts';
import { RETRY_WINDOW_MS } from './schedule.ts';

/**
 * Sends a delivery again, now, under the same webhook-id, with a fresh retry window. Refused
 * (409) while an attempt is in flight, or when its hook no longer exists.
 */
export async function redeliver(db: Kysely<Database>, organizationId: string, id: string, now: Date): Promise<DeliveryRow> {
  const at = now.toISOString();
  return db.transaction().execute(async (trx) => {
    const row = await findDelivery(trx, organizationId, id);
    if (!row) throw notFound('Webhook delivery');
    if (inFlight(row, now)) throw conflict('An attempt of this delivery is in flight; redeliver it once that attempt is recorded');
    const hooks = await hooksOf(trx, organizationId, row.source_id);
    if (!hooks.some((h) => h.id === row.hook_id && h.type === row.event_type)) {
      throw conflict(`The hook of this delivery no longer exists or no longer receives ${row.event_type} events`);
    }
    const set = { status: 'pending', next_attempt_at: at, retry_until: new Date(now.getTime() + RETRY_WINDOW_MS).toISOString(), lease_owner: null, lease_expires_at: null, updated_at: at };
    // Conditional on what was read: a worker claiming it meanwhile makes this a 409, not a second sender.
    if (!(await rescheduleIfIdle(trx, row, set, at))) throw conflict('The delivery changed meanwhile; try again');
    await bumpCounters(trx, statusChange(organizationId, row.status, 'pending'));
    return { ...row, ...set };
  });
}
