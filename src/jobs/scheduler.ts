import { hostname } from 'node:os';
import { sql, type Selectable, type Transaction } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/database.ts';
import type { AgentTaskTable, Database } from '../db/schema.ts';
import { readJson } from '../db/values.ts';
import { moveTask, windowOfRow } from '../modules/tasks/tasks.repository.ts';
import { isOpen, nextOpening } from '../modules/tasks/window.ts';
import type { Dialer, DialOutcome } from './dialer.ts';
import { backoffMs, judge, type RetryPolicy } from './retry.ts';

type Task = Selectable<AgentTaskTable>;

export interface SchedulerOptions {
  db: Db;
  clock: Clock;
  dialer: Dialer;
  retry: RetryPolicy;
  log: { info(o: object, m?: string): void; warn(o: object, m?: string): void; error(o: object, m?: string): void };
  /** How long a claim holds without renewal; a worker that dies loses its tasks after this. */
  leaseMs?: number;
  pollMs?: number;
  /** Calls this worker runs at once, whatever the credentials allow. */
  maxRunning?: number;
  workerId?: string;
}

export interface TickResult {
  started: number;
  deferred: number;
  reclaimed: number;
}

/**
 * Runs agent tasks: claims due ones with a lease, never past a SIP credential's
 * maxAgentTasks (checked under a row lock on the credential, so it holds across processes),
 * calls the dialer, renews the lease while the call runs, and records the outcome with retry
 * and backoff. Work that a dead worker held comes back when its lease expires.
 */
export class Scheduler {
  readonly workerId: string;
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly maxRunning: number;
  private readonly running = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<TickResult> | null = null;

  constructor(private readonly opts: SchedulerOptions) {
    this.workerId = opts.workerId ?? `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`;
    this.leaseMs = opts.leaseMs ?? 60_000;
    this.pollMs = opts.pollMs ?? 1_000;
    this.maxRunning = opts.maxRunning ?? 100;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick().catch((err: unknown) => this.opts.log.error({ err }, 'scheduler tick failed')), this.pollMs);
  }

  /** Stops claiming; running calls finish (or are abandoned to their leases after `graceMs`). */
  async stop(graceMs = 10_000): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.ticking?.catch(() => undefined);
    const all = Promise.all([...this.running.values()].map((r) => r.done));
    await Promise.race([all, new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
    for (const r of this.running.values()) r.controller.abort();
  }

  abort(taskId: string): void {
    this.running.get(taskId)?.controller.abort();
  }

  /** Resolves when every call this worker started has finished and been recorded (tests). */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.all([...this.running.values()].map((r) => r.done));
  }

  get runningCount(): number {
    return this.running.size;
  }

  tick(): Promise<TickResult> {
    // One tick at a time per worker; an overlapping call joins the one in flight.
    this.ticking ??= this.doTick().finally(() => (this.ticking = null));
    return this.ticking;
  }

  private async doTick(): Promise<TickResult> {
    const result: TickResult = { started: 0, deferred: 0, reclaimed: await this.reclaimExpired() };
    const free = this.maxRunning - this.running.size;
    if (free <= 0) return result;
    const now = this.opts.clock.now();
    const full = await this.fullCredentials();
    const paused = await this.opts.db.kysely.selectFrom('agent_task_pauses').select('agent_id').execute();
    const skip = [...full.agents, ...paused.map((p) => p.agent_id)];
    for (const task of await this.dueTasks(now, Math.min(free * 2, 200), skip)) {
      if (this.running.size >= this.maxRunning) break;
      if (!isOpen(windowOfRow(task), now)) {
        await this.defer(task, nextOpening(windowOfRow(task), now));
        result.deferred++;
        continue;
      }
      if (await this.claim(task)) result.started++;
    }
    return result;
  }

  /**
   * The next due tasks, oldest first, skipping the given agents (paused, or whose credential
   * is full). Served by the partial index on (next_attempt_at, id) WHERE status = 'SCHEDULED';
   * the exclusions are a short list of constants rather than a join, so the planner keeps
   * walking that index instead of sorting every due row.
   */
  dueTasks(now: Date, limit: number, excludeAgents: string[] = []): Promise<Task[]> {
    let query = this.opts.db.kysely
      .selectFrom('agent_tasks')
      .selectAll()
      .where('status', '=', 'SCHEDULED')
      .where('next_attempt_at', '<=', now.toISOString())
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(limit);
    if (excludeAgents.length) query = query.where('agent_id', 'not in', excludeAgents);
    return query.execute();
  }

  /** Credentials at their limit, and the agents that call through them: not worth a claim attempt. */
  private async fullCredentials(): Promise<{ agents: string[] }> {
    const { rows } = await sql<{ agent_id: string }>`
      select a.id as agent_id from assistants a
      join sip_numbers n on n.id = a.telephone_number_id
      join sip_credentials c on c.id = n.sip_credential_id
      where c.max_agent_tasks <= (select count(*) from agent_tasks t where t.status = 'IN_PROGRESS' and t.sip_credential_id = c.id)
    `.execute(this.opts.db.kysely);
    return { agents: rows.map((r) => r.agent_id) };
  }

  private async defer(task: Task, until: Date): Promise<void> {
    await this.opts.db.kysely
      .updateTable('agent_tasks')
      .set({ next_attempt_at: until.toISOString(), updated_at: this.opts.clock.now().toISOString() })
      .where('id', '=', task.id)
      .where('status', '=', 'SCHEDULED')
      .execute();
  }

  private async credentialOf(trx: Transaction<Database>, agentId: string): Promise<{ id: string; max: number } | null> {
    const { rows } = await sql<{ id: string; max_agent_tasks: number }>`
      select c.id, c.max_agent_tasks from assistants a
      join sip_numbers n on n.id = a.telephone_number_id
      join sip_credentials c on c.id = n.sip_credential_id
      where a.id = ${agentId}
    `.execute(trx);
    const row = rows[0];
    return row ? { id: row.id, max: Number(row.max_agent_tasks) } : null;
  }

  private async claim(task: Task): Promise<boolean> {
    const now = this.opts.clock.now();
    const at = now.toISOString();
    const leaseUntil = new Date(now.getTime() + this.leaseMs).toISOString();
    let credentialId: string | null = null;
    const claimed = await this.opts.db.kysely.transaction().execute(async (trx) => {
      const credential = await this.credentialOf(trx, task.agent_id);
      if (credential) {
        // The row lock makes "count the running, then add one" atomic per credential across
        // processes; on SQLite the write transaction already serialises every claim.
        if (this.opts.db.dialect === 'postgres') await sql`select id from sip_credentials where id = ${credential.id} for update`.execute(trx);
        const running = await trx.selectFrom('agent_tasks').select((eb) => eb.fn.countAll<number>().as('n'))
          .where('status', '=', 'IN_PROGRESS').where('sip_credential_id', '=', credential.id).executeTakeFirstOrThrow();
        if (Number(running.n) >= credential.max) return false;
        credentialId = credential.id;
      }
      return moveTask(trx, task, 'SCHEDULED', {
        status: 'IN_PROGRESS',
        set: { lease_owner: this.workerId, lease_expires_at: leaseUntil, attempts: task.attempts + 1, sip_credential_id: credentialId, next_attempt_at: null },
      }, at);
    }).catch((err: unknown) => {
      // Another process won a race for the same row or lock (SQLite busy, serialization): next tick.
      this.opts.log.warn({ err, taskId: task.id }, 'claim failed; will retry');
      return false;
    });
    if (!claimed) return false;
    this.launch({ ...task, attempts: task.attempts + 1, sip_credential_id: credentialId, lease_owner: this.workerId });
    return true;
  }

  private launch(task: Task): void {
    const controller = new AbortController();
    const done = this.runCall(task, controller).finally(() => this.running.delete(task.id));
    this.running.set(task.id, { controller, done });
  }

  private async runCall(task: Task, controller: AbortController): Promise<void> {
    const renew = setInterval(() => void this.renewLease(task, controller), Math.max(50, this.leaseMs / 3));
    let outcome: DialOutcome;
    try {
      outcome = await this.opts.dialer.dial({
        taskId: task.id,
        organizationId: task.organization_id,
        agentId: task.agent_id,
        targetNumber: task.target_number,
        userValues: readJson<Record<string, unknown>>(task.user_values),
        sipCredentialId: task.sip_credential_id,
        attempt: task.attempts,
        signal: controller.signal,
      });
    } catch (err) {
      outcome = { status: 'failed', error: err instanceof Error ? err.message : 'dialer failed', retryable: true };
    } finally {
      clearInterval(renew);
    }
    if (controller.signal.aborted) return; // cancelled or lease lost: someone else owns the row now
    await this.record(task, outcome).catch((err: unknown) => this.opts.log.error({ err, taskId: task.id }, 'could not record call outcome'));
  }

  private async renewLease(task: Task, controller: AbortController): Promise<void> {
    const now = this.opts.clock.now();
    const result = await this.opts.db.kysely
      .updateTable('agent_tasks')
      .set({ lease_expires_at: new Date(now.getTime() + this.leaseMs).toISOString() })
      .where('id', '=', task.id)
      .where('status', '=', 'IN_PROGRESS')
      .where('lease_owner', '=', this.workerId)
      .executeTakeFirst()
      .catch(() => null);
    if (result && Number(result.numUpdatedRows) === 0) controller.abort();
  }

  private async record(task: Task, outcome: DialOutcome): Promise<void> {
    const now = this.opts.clock.now();
    const at = now.toISOString();
    const verdict = judge(outcome);
    const cleared = { lease_owner: null, lease_expires_at: null };
    let to: Parameters<typeof moveTask>[3];
    if (verdict.status === 'COMPLETED') {
      to = { status: 'COMPLETED', set: { ...cleared, completed_at: at, last_error: null, conclusion_id: outcome.status === 'completed' ? (outcome.conclusionId ?? null) : null } };
    } else if (verdict.status === 'RETRY' && task.attempts < task.max_attempts) {
      const earliest = new Date(now.getTime() + backoffMs(this.opts.retry, task.attempts));
      const next = nextOpening(windowOfRow(task), earliest);
      to = { status: 'SCHEDULED', set: { ...cleared, next_attempt_at: next.toISOString(), last_error: `attempt ${task.attempts}: ${verdict.error}` } };
    } else {
      to = { status: 'FAILED', set: { ...cleared, completed_at: at, last_error: `attempt ${task.attempts}: ${verdict.error}` } };
    }
    await this.opts.db.kysely.transaction().execute((trx) => moveTask(trx, task, 'IN_PROGRESS', to, at, this.workerId));
  }

  /** Tasks whose worker stopped renewing: the attempt counts as failed, and the task goes back in line. */
  private async reclaimExpired(): Promise<number> {
    const now = this.opts.clock.now();
    const at = now.toISOString();
    const expired = await this.opts.db.kysely.selectFrom('agent_tasks').selectAll()
      .where('status', '=', 'IN_PROGRESS').where('lease_expires_at', '<', at).limit(100).execute();
    let count = 0;
    for (const task of expired) {
      const error = `attempt ${task.attempts}: the worker running it stopped (lease expired)`;
      const retry = task.attempts < task.max_attempts;
      const to = retry
        ? { status: 'SCHEDULED' as const, set: { lease_owner: null, lease_expires_at: null, next_attempt_at: at, last_error: error } }
        : { status: 'FAILED' as const, set: { lease_owner: null, lease_expires_at: null, completed_at: at, last_error: error } };
      const moved = await this.opts.db.kysely.transaction()
        .execute((trx) => moveTask(trx, task, 'IN_PROGRESS', to, at, task.lease_owner ?? undefined))
        .catch(() => false);
      if (moved) count++;
    }
    return count;
  }
}
