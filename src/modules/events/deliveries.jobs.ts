import { sql, type ExpressionBuilder } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Context } from '../../context.ts';
import { readJson } from '../../db/values.ts';
import { EgressError } from '../../egress/client.ts';
import type { JobKind } from '../../jobs/runner.ts';
import type { StoredHook } from '../assistants/items.ts';
import { noteEndpointResult } from './deliveries.circuit.ts';
import { bumpCounters, statusChange, type DeliveryRow } from './deliveries.repository.ts';
import type { DeliveryStatus } from './deliveries.schemas.ts';
import { nextAttemptAt } from './schedule.ts';
import { ROTATION_OVERLAP_MS, webhookHeaders } from '../../crypto/webhook-signing.ts';

export const DELIVERY_JOB = 'webhook_delivery';

/**
 * Fairness between tenants: deliveries in flight at once (fleet-wide, counted from the leases)
 * per organization and per endpoint (URL origin). One tenant's slow or dead receiver then holds
 * at most this many slots, and never delays another tenant's deliveries.
 */
export const DELIVERY_FAIRNESS = { perOrganization: 8, perEndpoint: 4 } as const;
const CANDIDATES = 200;

export interface DeliveryJob {
  readonly id: string;
  readonly row: DeliveryRow;
  /** The hook as it is now (URL and secrets are read at send time, not at enqueue). */
  readonly hook: StoredHook | undefined;
}

export interface DeliveryJobOptions {
  leaseMs: number;
  /** Requests this process has in flight at once. */
  concurrency?: number;
  timeoutMs?: number;
  maxResponseBytes?: number;
  random?: () => number;
}

interface Outcome {
  statusCode: number | null;
  latencyMs: number | null;
  error: string | null;
}

const USER_AGENT = 'Parley-Webhooks/1';
const ABANDONED = 'the worker sending it stopped before the result was recorded (lease expired)';

const httpError = (status: number) =>
  status >= 300 && status < 400 ? `HTTP ${status}: redirects are not followed; answer 2xx at the configured URL` : `HTTP ${status}`;

/**
 * The webhook outbox as the runner's jobs: a claim leases due deliveries in one statement
 * (FOR UPDATE SKIP LOCKED on PostgreSQL), skipping organizations and endpoints at their
 * in-flight cap and endpoints whose circuit is open; each delivery is signed and POSTed through
 * egress, and its outcome recorded on the row and in the attempt log, retried with backoff.
 */
export function deliveryJobs(ctx: Context, options: DeliveryJobOptions): JobKind<DeliveryJob> {
  const { db, clock, log, secrets, egress } = ctx;
  const { kysely, dialect } = db;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxResponseBytes = options.maxResponseBytes ?? 64 * 1024;
  // An attempt can never outlive its lease: otherwise a slow request would be sent twice at once.
  const leaseMs = Math.max(options.leaseMs, timeoutMs * 3);

  async function hooksOf(rows: readonly DeliveryRow[]): Promise<Map<string, StoredHook[]>> {
    const ids = [...new Set(rows.map((r) => r.source_id))];
    if (!ids.length) return new Map();
    const sources = await kysely.selectFrom('assistants').select(['id', 'kind', 'organization_id', 'call_event_hooks']).where('id', 'in', ids).execute();
    const orgOf = new Map(rows.map((r) => [r.source_id, r.organization_id]));
    return new Map(sources
      .filter((s) => orgOf.get(s.id) === s.organization_id)
      .map((s) => [`${s.kind}:${s.id}`, readJson<StoredHook[]>(s.call_event_hooks)]));
  }

  function secretsOf(hook: StoredHook, now: Date): { current: string; previous?: string } {
    const current = secrets.open(hook.secret);
    const overlap = hook.previousSecret && hook.rotatedAt && now.getTime() - Date.parse(hook.rotatedAt) < ROTATION_OVERLAP_MS;
    return overlap && hook.previousSecret ? { current, previous: secrets.open(hook.previousSecret) } : { current };
  }

  async function send(row: DeliveryRow, hook: StoredHook, attempt: number, sentAt: Date, signal: AbortSignal): Promise<Outcome | null> {
    const started = performance.now();
    try {
      const body = JSON.stringify({ type: row.event_type, timestamp: row.created_at, data: readJson(row.payload) });
      const headers = {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'x-request-id': `${row.id}.${attempt}`,
        ...webhookHeaders(secretsOf(hook, sentAt), row.id, sentAt, body),
      };
      const res = await egress.request({ url: hook.url, method: 'POST', headers, body, timeoutMs, maxResponseBytes, signal });
      return { statusCode: res.status, latencyMs: res.latencyMs, error: res.status >= 200 && res.status < 300 ? null : httpError(res.status) };
    } catch (err) {
      if (signal.aborted) return null; // stopping: unrecorded, the lease brings it back
      // EgressError messages name only the host and an error code (the tenant reads them as lastError);
      // what they leave out, such as the address a refused name resolved to, goes to the log only.
      if (!(err instanceof EgressError)) log.error({ err, deliveryId: row.id }, 'webhook delivery attempt failed unexpectedly');
      else if (err.detail) log.warn({ deliveryId: row.id, kind: err.kind, detail: err.detail }, 'webhook delivery refused');
      return { statusCode: null, latencyMs: Math.round(performance.now() - started), error: err instanceof EgressError ? err.message : 'the request could not be sent' };
    }
  }

  async function record(row: DeliveryRow, attempt: number, sentAt: Date, outcome: Outcome): Promise<void> {
    const now = clock.now();
    const at = now.toISOString();
    const delivered = outcome.error === null;
    const recorded = await kysely.transaction().execute(async (trx) => {
      // An endpoint whose circuit this failure opened (or keeps open) is not tried before it closes.
      const openUntil = await noteEndpointResult(trx, row.endpoint, outcome.statusCode, now);
      const backoff = delivered ? null : nextAttemptAt(now, attempt, row.retry_until, options.random);
      const next = backoff && openUntil && openUntil > backoff ? openUntil : backoff;
      const status: DeliveryStatus = delivered ? 'delivered' : next ? 'pending' : 'failed';
      // Only the claim that sent it may record it: same owner, same attempt count, still pending.
      const result = await trx.updateTable('webhook_deliveries')
        .set({
          status, attempts: attempt, next_attempt_at: next?.toISOString() ?? null, lease_owner: null, lease_expires_at: null,
          last_status_code: outcome.statusCode, last_error: outcome.error, last_latency_ms: outcome.latencyMs, updated_at: at,
          ...(delivered ? { delivered_at: at } : {}),
        })
        .where('id', '=', row.id).where('lease_owner', '=', row.lease_owner).where('attempts', '=', row.attempts).where('status', '=', 'pending')
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return null;
      await trx.insertInto('webhook_delivery_attempts')
        .values({ delivery_id: row.id, attempt, at: sentAt.toISOString(), status_code: outcome.statusCode, latency_ms: outcome.latencyMs, error: outcome.error })
        .execute();
      await bumpCounters(trx, statusChange(row.organization_id, 'pending', status));
      return status;
    });
    if (recorded === 'failed') {
      log.warn({ deliveryId: row.id, hookId: row.hook_id, attempts: attempt, statusCode: outcome.statusCode }, 'webhook delivery failed for good');
    }
  }

  /** Fails a delivery that cannot be attempted at all (its hook is gone), without an attempt. */
  async function giveUp(row: DeliveryRow, error: string): Promise<void> {
    const at = clock.now().toISOString();
    await kysely.transaction().execute(async (trx) => {
      const result = await trx.updateTable('webhook_deliveries')
        .set({ status: 'failed', next_attempt_at: null, lease_owner: null, lease_expires_at: null, last_status_code: null, last_error: error, last_latency_ms: null, updated_at: at })
        .where('id', '=', row.id).where('lease_owner', '=', row.lease_owner).where('attempts', '=', row.attempts).where('status', '=', 'pending')
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 1) await bumpCounters(trx, statusChange(row.organization_id, 'pending', 'failed'));
    });
  }

  return {
    name: DELIVERY_JOB,
    concurrency: options.concurrency ?? 32,
    leaseMs,

    async claim({ owner, now, leaseUntil, limit }) {
      const at = now.toISOString();
      const { perOrganization, perEndpoint } = DELIVERY_FAIRNESS;
      const lock = dialect === 'postgres' ? sql`for update skip locked` : sql``;
      const inFlight = (column: string) => sql`select ${sql.ref(column)} from webhook_deliveries
        where lease_owner is not null and status = 'pending' group by ${sql.ref(column)}
        having count(*) >= ${column === 'organization_id' ? perOrganization : perEndpoint}`;
      const { rows } = await sql<DeliveryRow>`
        with candidates as (
          select d.id, d.organization_id, d.endpoint, d.next_attempt_at from webhook_deliveries d
          where d.status = 'pending' and d.next_attempt_at <= ${at}
            and d.organization_id not in (${inFlight('organization_id')})
            and d.endpoint not in (${inFlight('endpoint')})
            and d.endpoint not in (select endpoint from webhook_endpoints where open_until > ${at})
          order by d.next_attempt_at, d.id
          limit ${CANDIDATES}
          ${lock}
        ), ranked as (
          select c.id, c.next_attempt_at as due,
            row_number() over (partition by c.organization_id order by c.next_attempt_at, c.id)
              + (select count(*) from webhook_deliveries f where f.lease_owner is not null and f.status = 'pending' and f.organization_id = c.organization_id) as org_load,
            row_number() over (partition by c.endpoint order by c.next_attempt_at, c.id)
              + (select count(*) from webhook_deliveries f where f.lease_owner is not null and f.status = 'pending' and f.endpoint = c.endpoint) as endpoint_load
          from candidates c
        )
        update webhook_deliveries set lease_owner = ${owner}, lease_expires_at = ${leaseUntil.toISOString()}, next_attempt_at = null, updated_at = ${at}
        where id in (
          select id from ranked where org_load <= ${perOrganization} and endpoint_load <= ${perEndpoint}
          order by due, id limit ${limit}
        ) and status = 'pending' and next_attempt_at <= ${at}
        returning *`.execute(kysely);
      const hooks = await hooksOf(rows);
      return rows.map((row) => ({ id: row.id, row, hook: hooks.get(`${row.source_kind}:${row.source_id}`)?.find((h) => h.id === row.hook_id) }));
    },

    async run({ row, hook }, signal) {
      if (!hook || hook.type !== row.event_type) {
        await giveUp(row, hook ? `the hook no longer receives ${row.event_type} events` : 'the hook no longer exists');
        return;
      }
      const attempt = row.attempts + 1;
      const sentAt = clock.now();
      const outcome = await send(row, hook, attempt, sentAt, signal);
      if (outcome) await record(row, attempt, sentAt, outcome);
    },

    async renew({ owner, ids, leaseUntil }) {
      const rows = await kysely.updateTable('webhook_deliveries').set({ lease_expires_at: leaseUntil.toISOString() })
        .where('id', 'in', ids).where('lease_owner', '=', owner).where('status', '=', 'pending')
        .returning('id').execute();
      return new Set(rows.map((r) => r.id));
    },

    /** Deliveries whose worker stopped mid-attempt: the attempt is logged as lost, and the delivery is due again. */
    async reclaim(now) {
      const at = now.toISOString();
      return kysely.transaction().execute(async (trx) => {
        const expired = (eb: ExpressionBuilder<Database, 'webhook_deliveries'>) =>
          eb.and([eb('lease_owner', 'is not', null), eb('lease_expires_at', '<', at), eb('status', '=', 'pending')]);
        // updated_at is when each was claimed: about when the lost attempt was sent, for the attempt log.
        const lost = await trx.selectFrom('webhook_deliveries').select(['id', 'updated_at']).where(expired).execute();
        if (!lost.length) return 0;
        const rows = await trx.updateTable('webhook_deliveries')
          .set((eb) => ({
            attempts: eb('attempts', '+', 1), next_attempt_at: at, lease_owner: null, lease_expires_at: null,
            last_status_code: null, last_error: ABANDONED, last_latency_ms: null, updated_at: at,
          }))
          .where(expired).where('id', 'in', lost.map((r) => r.id))
          .returning(['id', 'attempts']).execute();
        const claimedAt = new Map(lost.map((r) => [r.id, r.updated_at]));
        if (rows.length) {
          await trx.insertInto('webhook_delivery_attempts')
            .values(rows.map((r) => ({ delivery_id: r.id, attempt: r.attempts, at: claimedAt.get(r.id) ?? at, status_code: null, latency_ms: null, error: ABANDONED })))
            .execute();
        }
        return rows.length;
      });
    },
  };
}
