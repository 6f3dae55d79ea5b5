import { sql, type Selectable, type Transaction, type Updateable } from 'kysely';
import { bumpCounter, readCounter } from '../../db/counters.ts';
import type { Database, Executor } from '../../db/schema.ts';
import { fetchPage, type PageQuery } from '../../http/pagination.ts';
import { readJson } from '../../db/values.ts';
import type { DeliveryStatus, WebhookDelivery, WebhookDeliveryAttempt } from './deliveries.schemas.ts';
import type { WebhookDeliveryAttemptTable, WebhookDeliveryTable } from './events.table.ts';

export type DeliveryRow = Selectable<WebhookDeliveryTable>;

/** The list filters; each one alone has a kept counter, combinations are counted. */
export interface DeliveryFilters {
  status?: string | undefined;
  hookId?: string | undefined;
  eventType?: string | undefined;
  callId?: string | undefined;
}

const FILTER_COLUMNS = { status: 'status', hookId: 'hook_id', eventType: 'event_type', callId: 'call_id' } as const;

export const deliveryCounter = (organizationId: string, filter?: [Exclude<keyof DeliveryFilters, 'callId'>, string]) =>
  filter ? `webhook_deliveries:${organizationId}:${filter[0]}:${filter[1]}` : `webhook_deliveries:${organizationId}`;

/**
 * Bumps counters in one global order (by key), so transactions that bump several at once
 * (enqueue, a status change) cannot deadlock on them.
 */
export async function bumpCounters(trx: Transaction<Database>, deltas: Map<string, number>): Promise<void> {
  for (const key of [...deltas.keys()].sort()) {
    const delta = deltas.get(key) ?? 0;
    if (delta) await bumpCounter(trx, key, delta);
  }
}

export function statusChange(organizationId: string, from: string, to: DeliveryStatus): Map<string, number> {
  if (from === to) return new Map();
  return new Map([[deliveryCounter(organizationId, ['status', from]), -1], [deliveryCounter(organizationId, ['status', to]), 1]]);
}

export async function countDeliveries(db: Executor, organizationId: string, filters: DeliveryFilters): Promise<number> {
  const given = (Object.keys(FILTER_COLUMNS) as (keyof DeliveryFilters)[]).filter((k) => filters[k] !== undefined);
  const [only] = given;
  if (given.length === 0) return readCounter(db, deliveryCounter(organizationId));
  if (given.length === 1 && only && only !== 'callId') return readCounter(db, deliveryCounter(organizationId, [only, filters[only] as string]));
  const row = await filterDeliveries(db, organizationId, filters).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

export function filterDeliveries(db: Executor, organizationId: string, filters: DeliveryFilters) {
  let query = db.selectFrom('webhook_deliveries').where('organization_id', '=', organizationId);
  for (const [key, column] of Object.entries(FILTER_COLUMNS)) {
    const value = filters[key as keyof DeliveryFilters];
    if (value !== undefined) query = query.where(sql.ref(column), '=', value);
  }
  return query;
}

/** Schedules a delivery anew, only as it was read and while no live lease holds it (false when it changed meanwhile). */
export async function rescheduleIfIdle(db: Executor, row: DeliveryRow, set: Updateable<WebhookDeliveryTable>, at: string): Promise<boolean> {
  const result = await db.updateTable('webhook_deliveries').set(set)
    .where('id', '=', row.id).where('status', '=', row.status).where('attempts', '=', row.attempts)
    .where((eb) => eb.or([eb('lease_owner', 'is', null), eb('lease_expires_at', '<=', at)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export const DELIVERY_SORT = { createdAt: 'created_at', updatedAt: 'updated_at' };

/** A page of an organization's deliveries; ids are matched in the one spelling the service writes (lower case). */
export async function listDeliveries(db: Executor, organizationId: string, given: DeliveryFilters, query: PageQuery, now: Date) {
  const filters = { ...given, hookId: given.hookId?.toLowerCase(), callId: given.callId?.toLowerCase() };
  const page = await fetchPage(filterDeliveries(db, organizationId, filters).selectAll(), query, DELIVERY_SORT, () => countDeliveries(db, organizationId, filters));
  return { ...page, items: page.items.map((row) => toDelivery(row, now)) };
}

export function findDelivery(db: Executor, organizationId: string, id: string) {
  return db.selectFrom('webhook_deliveries').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
}

/** The latest attempts, oldest first. */
export async function listAttempts(db: Executor, deliveryId: string, limit = 100): Promise<WebhookDeliveryAttempt[]> {
  const rows = await db.selectFrom('webhook_delivery_attempts').selectAll().where('delivery_id', '=', deliveryId)
    .orderBy('attempt', 'desc').limit(limit).execute();
  return rows.reverse().map(toAttempt);
}

export const inFlight = (row: DeliveryRow, now: Date) =>
  row.lease_owner !== null && row.lease_expires_at !== null && row.lease_expires_at > now.toISOString();

export function toDelivery(row: DeliveryRow, now: Date): WebhookDelivery {
  return {
    id: row.id,
    hookId: row.hook_id,
    sourceKind: row.source_kind,
    sourceId: row.source_id,
    eventType: row.event_type,
    payload: readJson<Record<string, unknown>>(row.payload),
    callId: row.call_id,
    status: row.status,
    inFlight: inFlight(row, now),
    attemptCount: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    retryUntil: row.retry_until,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    lastLatencyMs: row.last_latency_ms,
    deliveredAt: row.delivered_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toAttempt(row: Selectable<WebhookDeliveryAttemptTable>): WebhookDeliveryAttempt {
  return { attempt: row.attempt, at: row.at, statusCode: row.status_code, latencyMs: row.latency_ms, error: row.error };
}
