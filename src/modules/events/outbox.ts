import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { readJson } from '../../db/values.ts';
import type { StoredHook } from '../assistants/items.ts';
import { endpointOf } from './deliveries.circuit.ts';
import { bumpCounters, deliveryCounter } from './deliveries.repository.ts';
import { RETRY_WINDOW_MS } from './schedule.ts';

const UUID = /^[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}$/i;

/** The call an event is about, when its payload names one. */
const callIdOf = (payload: Record<string, unknown>) => (typeof payload.callId === 'string' && UUID.test(payload.callId) ? payload.callId : null);

export interface OutboxEvent {
  organizationId: string;
  sourceKind: 'assistant' | 'agent';
  sourceId: string;
  type: 'call_started' | 'call_ended' | 'transcript_ready' | 'task_status_changed' | 'recording_ready' | 'call_analyzed';
  payload: Record<string, unknown>;
}

/**
 * Puts one delivery per hook of the event's type into the outbox, inside the caller's
 * transaction: the event is sent if and only if the state change that caused it commits.
 * Call it last in that transaction; it bumps the organization's delivery counters, whose row
 * locks are then held only until the commit.
 *
 * `now` is the event time (the body's `timestamp`, and when the first attempt is due), from the
 * app's clock.
 */
export async function enqueueEvent(trx: Transaction<Database>, event: OutboxEvent, now: Date): Promise<void> {
  const source = await trx
    .selectFrom('assistants')
    .select('call_event_hooks')
    .where('id', '=', event.sourceId)
    .where('organization_id', '=', event.organizationId)
    .where('kind', '=', event.sourceKind)
    .executeTakeFirst();
  if (!source) return;
  const hooks = readJson<StoredHook[]>(source.call_event_hooks).filter((hook) => hook.type === event.type);
  if (!hooks.length) return;
  const at = now.toISOString();
  const payload = JSON.stringify(event.payload);
  await trx
    .insertInto('webhook_deliveries')
    .values(hooks.map((hook) => ({
      id: `msg_${crypto.randomUUID()}`,
      organization_id: event.organizationId,
      hook_id: hook.id,
      source_kind: event.sourceKind,
      source_id: event.sourceId,
      event_type: event.type,
      payload,
      status: 'pending',
      attempts: 0,
      next_attempt_at: at,
      retry_until: new Date(now.getTime() + RETRY_WINDOW_MS).toISOString(),
      endpoint: endpointOf(hook.url),
      call_id: callIdOf(event.payload),
      created_at: at,
      updated_at: at,
    })))
    .execute();
  const org = event.organizationId;
  const deltas = new Map<string, number>([
    [deliveryCounter(org), hooks.length],
    [deliveryCounter(org, ['status', 'pending']), hooks.length],
    [deliveryCounter(org, ['eventType', event.type]), hooks.length],
  ]);
  for (const hook of hooks) {
    const key = deliveryCounter(org, ['hookId', hook.id]);
    deltas.set(key, (deltas.get(key) ?? 0) + 1);
  }
  await bumpCounters(trx, deltas);
}
