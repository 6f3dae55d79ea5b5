import { hostname } from 'node:os';
import { systemClock, type Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { createSecretBox, type SecretBox } from '../../crypto/secret-box.ts';
import type { Db } from '../../db/database.ts';
import { readJson } from '../../db/values.ts';
import { EgressError, createEgress } from '../../egress/client.ts';
import { parseAllowList, type AllowList } from '../../egress/policy.ts';
import type { StoredHook } from '../assistants/items.ts';
import { bumpCounters, statusChange, type DeliveryRow } from './deliveries.repository.ts';
import type { DeliveryStatus } from './deliveries.schemas.ts';
import { nextAttemptAt } from './schedule.ts';
import { ROTATION_OVERLAP_MS, webhookHeaders } from './signing.ts';

type Egress = Pick<ReturnType<typeof createEgress>, 'request' | 'close'>;

export interface DelivererOptions {
  db: Db;
  clock: Clock;
  /** Opens the sealed hook secrets. */
  box: SecretBox;
  allow: AllowList;
  log: { info(o: object, m?: string): void; warn(o: object, m?: string): void; error(o: object, m?: string): void };
  /** How long a claim holds; a worker that dies mid-attempt loses its deliveries after this. */
  leaseMs?: number;
  pollMs?: number;
  /** Requests this worker has in flight at once. */
  maxInFlight?: number;
  timeoutMs?: number;
  maxResponseBytes?: number;
  workerId?: string;
  random?: () => number;
  /** Replaces the egress client (tests). */
  egress?: Egress;
}

export interface DeliveryTickResult {
  claimed: number;
  reclaimed: number;
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
 * Sends the webhook outbox: claims due deliveries with a lease (FOR UPDATE SKIP LOCKED on
 * PostgreSQL; on SQLite one conditional UPDATE, which the single writer makes atomic), signs and
 * POSTs each through egress, and records the outcome on the row and in the attempt log, retrying
 * with backoff. Every state is in the database: a restarted worker, or another process, carries on,
 * and a delivery whose worker died comes back when its lease expires.
 */
export class Deliverer {
  readonly workerId: string;
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly maxInFlight: number;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly running = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<DeliveryTickResult> | null = null;
  private stopped = false;
  /** The last claim filled every free slot: more may be due than one poll takes. */
  private backlog = false;
  private client: Egress | null = null;

  constructor(private readonly opts: DelivererOptions) {
    this.workerId = opts.workerId ?? `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    // An attempt can never outlive its lease: otherwise a slow request would be sent twice at once.
    this.leaseMs = Math.max(opts.leaseMs ?? 60_000, this.timeoutMs * 3);
    this.pollMs = opts.pollMs ?? 1_000;
    this.maxInFlight = opts.maxInFlight ?? 32;
    this.maxResponseBytes = opts.maxResponseBytes ?? 64 * 1024;
  }

  start(): void {
    this.stopped = false;
    if (this.timer) return;
    this.timer = setInterval(this.poll, this.pollMs);
    this.poll();
  }

  private readonly poll = (): void => {
    void this.tick().catch((err: unknown) => this.opts.log.error({ err }, 'webhook deliverer tick failed'));
  };

  /**
   * Stops claiming and lets requests in flight finish for up to `graceMs`; the rest are aborted
   * unrecorded, and their leases bring them back to whichever worker runs next.
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.ticking?.catch(() => undefined);
    const all = () => Promise.all([...this.running.values()].map((r) => r.done));
    await Promise.race([all(), new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
    for (const r of this.running.values()) r.controller.abort();
    await all();
    await this.client?.close();
    this.client = null;
  }

  /** Resolves when every attempt this worker started has been recorded (tests). */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.all([...this.running.values()].map((r) => r.done));
  }

  get inFlight(): number {
    return this.running.size;
  }

  tick(): Promise<DeliveryTickResult> {
    this.ticking ??= this.doTick().finally(() => (this.ticking = null));
    return this.ticking;
  }

  private async doTick(): Promise<DeliveryTickResult> {
    if (this.stopped) return { claimed: 0, reclaimed: 0 };
    const reclaimed = await this.reclaimExpired();
    const free = this.maxInFlight - this.running.size;
    if (free <= 0) return { claimed: 0, reclaimed };
    const rows = await this.claim(free);
    this.backlog = rows.length === free;
    const hooks = await this.hooksOf(rows);
    for (const row of rows) this.launch(row, hooks.get(`${row.source_kind}:${row.source_id}`)?.find((h) => h.id === row.hook_id));
    return { claimed: rows.length, reclaimed };
  }

  private async claim(limit: number): Promise<DeliveryRow[]> {
    const { kysely, dialect } = this.opts.db;
    const now = this.opts.clock.now();
    const at = now.toISOString();
    let due = kysely.selectFrom('webhook_deliveries').select('id')
      .where('status', '=', 'pending').where('next_attempt_at', '<=', at)
      .orderBy('next_attempt_at').orderBy('id').limit(limit);
    if (dialect === 'postgres') due = due.forUpdate().skipLocked();
    // A leased row has no next_attempt_at, so it is out of the due index until it is settled or reclaimed.
    return kysely.updateTable('webhook_deliveries')
      .set({ lease_owner: this.workerId, lease_expires_at: new Date(now.getTime() + this.leaseMs).toISOString(), next_attempt_at: null, updated_at: at })
      .where('id', 'in', due)
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', at)
      .returningAll()
      .execute();
  }

  /** The current hooks of each source, read once per tick: URL and secrets as they are now, not at enqueue. */
  private async hooksOf(rows: readonly DeliveryRow[]): Promise<Map<string, StoredHook[]>> {
    const ids = [...new Set(rows.map((r) => r.source_id))];
    if (!ids.length) return new Map();
    const sources = await this.opts.db.kysely.selectFrom('assistants').select(['id', 'kind', 'organization_id', 'call_event_hooks'])
      .where('id', 'in', ids).execute();
    const orgOf = new Map(rows.map((r) => [r.source_id, r.organization_id]));
    return new Map(sources
      .filter((s) => orgOf.get(s.id) === s.organization_id)
      .map((s) => [`${s.kind}:${s.id}`, readJson<StoredHook[]>(s.call_event_hooks)]));
  }

  private launch(row: DeliveryRow, hook: StoredHook | undefined): void {
    const controller = new AbortController();
    const done = this.attempt(row, hook, controller.signal)
      .catch((err: unknown) => this.opts.log.error({ err, deliveryId: row.id }, 'could not record a webhook delivery attempt'))
      .finally(() => {
        this.running.delete(row.id);
        // Keep the pipe full through a backlog instead of waiting for the next poll (when started; tests tick by hand).
        if (this.timer && this.backlog && this.running.size <= this.maxInFlight / 2) this.poll();
      });
    this.running.set(row.id, { controller, done });
  }

  private async attempt(row: DeliveryRow, hook: StoredHook | undefined, signal: AbortSignal): Promise<void> {
    if (!hook || hook.type !== row.event_type) {
      await this.giveUp(row, hook ? `the hook no longer receives ${row.event_type} events` : 'the hook no longer exists');
      return;
    }
    const attempt = row.attempts + 1;
    const sentAt = this.opts.clock.now();
    const started = performance.now();
    let outcome: Outcome;
    try {
      const body = JSON.stringify({ type: row.event_type, timestamp: row.created_at, data: readJson(row.payload) });
      const headers = {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'x-request-id': `${row.id}.${attempt}`,
        ...webhookHeaders(this.secretsOf(hook, sentAt), row.id, sentAt, body),
      };
      this.client ??= this.opts.egress ?? createEgress({ allow: this.opts.allow });
      const res = await this.client.request({ url: hook.url, method: 'POST', headers, body, timeoutMs: this.timeoutMs, maxResponseBytes: this.maxResponseBytes, signal });
      outcome = { statusCode: res.status, latencyMs: res.latencyMs, error: res.status >= 200 && res.status < 300 ? null : httpError(res.status) };
    } catch (err) {
      if (signal.aborted) return; // stopping: unrecorded, the lease brings it back
      // EgressError messages name only the host and an error code; anything else is ours, and kept generic.
      if (!(err instanceof EgressError)) this.opts.log.error({ err, deliveryId: row.id }, 'webhook delivery attempt failed unexpectedly');
      outcome = { statusCode: null, latencyMs: Math.round(performance.now() - started), error: err instanceof EgressError ? err.message : 'the request could not be sent' };
    }
    await this.record(row, attempt, sentAt, outcome);
  }

  private secretsOf(hook: StoredHook, now: Date): { current: string; previous?: string } {
    const current = this.opts.box.open(hook.secret);
    const overlap = hook.previousSecret && hook.rotatedAt && now.getTime() - Date.parse(hook.rotatedAt) < ROTATION_OVERLAP_MS;
    return overlap && hook.previousSecret ? { current, previous: this.opts.box.open(hook.previousSecret) } : { current };
  }

  private async record(row: DeliveryRow, attempt: number, sentAt: Date, outcome: Outcome): Promise<void> {
    const now = this.opts.clock.now();
    const at = now.toISOString();
    const delivered = outcome.error === null;
    const next = delivered ? null : nextAttemptAt(now, attempt, row.retry_until, this.opts.random);
    const status: DeliveryStatus = delivered ? 'delivered' : next ? 'pending' : 'failed';
    const recorded = await this.opts.db.kysely.transaction().execute(async (trx) => {
      // Only the claim that sent it may record it: same owner, same attempt count, still pending.
      const result = await trx.updateTable('webhook_deliveries')
        .set({
          status, attempts: attempt, next_attempt_at: next?.toISOString() ?? null, lease_owner: null, lease_expires_at: null,
          last_status_code: outcome.statusCode, last_error: outcome.error, last_latency_ms: outcome.latencyMs, updated_at: at,
          ...(delivered ? { delivered_at: at } : {}),
        })
        .where('id', '=', row.id).where('lease_owner', '=', this.workerId).where('attempts', '=', row.attempts).where('status', '=', 'pending')
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return false;
      await trx.insertInto('webhook_delivery_attempts')
        .values({ delivery_id: row.id, attempt, at: sentAt.toISOString(), status_code: outcome.statusCode, latency_ms: outcome.latencyMs, error: outcome.error })
        .execute();
      await bumpCounters(trx, statusChange(row.organization_id, 'pending', status));
      return true;
    });
    if (recorded && status === 'failed') {
      this.opts.log.warn({ deliveryId: row.id, hookId: row.hook_id, attempts: attempt, statusCode: outcome.statusCode }, 'webhook delivery failed for good');
    }
  }

  /** Fails a delivery that cannot be attempted at all (its hook is gone), without an attempt. */
  private async giveUp(row: DeliveryRow, error: string): Promise<void> {
    const at = this.opts.clock.now().toISOString();
    await this.opts.db.kysely.transaction().execute(async (trx) => {
      const result = await trx.updateTable('webhook_deliveries')
        .set({ status: 'failed', next_attempt_at: null, lease_owner: null, lease_expires_at: null, last_status_code: null, last_error: error, last_latency_ms: null, updated_at: at })
        .where('id', '=', row.id).where('lease_owner', '=', this.workerId).where('attempts', '=', row.attempts).where('status', '=', 'pending')
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 1) await bumpCounters(trx, statusChange(row.organization_id, 'pending', 'failed'));
    });
  }

  /** Deliveries whose worker stopped mid-attempt: the attempt is logged as lost, and the delivery is due again. */
  private async reclaimExpired(): Promise<number> {
    const at = this.opts.clock.now().toISOString();
    const { kysely } = this.opts.db;
    const expired = await kysely.selectFrom('webhook_deliveries').select(['id', 'attempts', 'lease_owner', 'updated_at'])
      .where('lease_owner', 'is not', null).where('lease_expires_at', '<', at).where('status', '=', 'pending').limit(100).execute();
    let count = 0;
    for (const row of expired) {
      const moved = await kysely.transaction().execute(async (trx) => {
        const result = await trx.updateTable('webhook_deliveries')
          .set({
            attempts: row.attempts + 1, next_attempt_at: at, lease_owner: null, lease_expires_at: null,
            last_status_code: null, last_error: ABANDONED, last_latency_ms: null, updated_at: at,
          })
          .where('id', '=', row.id).where('lease_owner', '=', row.lease_owner).where('attempts', '=', row.attempts).where('status', '=', 'pending')
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) !== 1) return false;
        await trx.insertInto('webhook_delivery_attempts')
          // updated_at is when it was claimed: about when the lost attempt was sent.
          .values({ delivery_id: row.id, attempt: row.attempts + 1, at: row.updated_at, status_code: null, latency_ms: null, error: ABANDONED })
          .execute();
        return true;
      }).catch(() => false); // another worker reclaimed it first
      if (moved) count++;
    }
    return count;
  }
}

/** The deliverer as configured: inside the app, or alone in a worker process. */
export function createDeliverer(config: Config, db: Db, log: DelivererOptions['log'], options: { clock?: Clock; pollMs?: number } = {}): Deliverer {
  return new Deliverer({
    db, log, clock: options.clock ?? systemClock, box: createSecretBox(config.secretKey), allow: parseAllowList(config.egressAllow),
    leaseMs: config.leaseMs, ...(options.pollMs ? { pollMs: options.pollMs } : {}),
  });
}
