import { sql, type Selectable, type Transaction } from 'kysely';
import type { Context } from '../../context.ts';
import { withClaimLock } from '../../db/claim-lock.ts';
import { CREDENTIAL_LOCK, credentialLoad } from '../sip/credential-load.ts';
import type { Database } from '../../db/schema.ts';
import { readJson, timestampParam } from '../../db/values.ts';
import { backoffMs, type RetryPolicy } from '../../jobs/backoff.ts';
import type { JobKind } from '../../jobs/runner.ts';
import type { Dialer, DialOutcome } from '../../telephony/dialer.ts';
import { judge, VOICEMAIL_OUTCOMES, type AttemptOutcome } from './outcomes.ts';
import { moveTask, recordMoves, windowOfRow, type Move, type Transition } from './tasks.repository.ts';
import type { AgentTaskTable } from './tasks.table.ts';
import { isOpen, nextOpening } from './window.ts';

type Task = Selectable<AgentTaskTable>;

/** Due tasks looked at per claim. */
const CANDIDATES = 200;

export interface TaskJobOptions {
  dialer: Dialer;
  retry: RetryPolicy;
  leaseMs: number;
  /** Calls this process runs at once, whatever the credentials allow. */
  concurrency?: number;
  /** Times one task may reach voicemail before it ends (PARLEY_TASK_MAX_VOICEMAILS). */
  maxVoicemails: number;
}

export const TASK_JOB = 'agent_task';

/**
 * Agent tasks as the runner's jobs: the task row is the job. A claim takes due tasks in one
 * statement, never past a SIP credential's maxAgentTasks; the count of running calls per
 * credential is only consistent across processes under a lock, so claims take one (the claim
 * is one short statement; runs and renewals do not take it). A task whose window closed while
 * it waited is moved to its next opening without counting an attempt.
 */
export function taskJobs(ctx: Context, options: TaskJobOptions): JobKind<Task> {
  const { db, clock, log } = ctx;
  const { kysely } = db;

  async function deferClosedWindows(trx: Transaction<Database>, now: Date): Promise<void> {
    const due = await trx.selectFrom('agent_tasks')
      .select(['id', 'allowed_hours_begin', 'allowed_hours', 'only_weekdays', 'timezone'])
      .where('status', '=', 'SCHEDULED').where('next_attempt_at', '<=', now.toISOString())
      .orderBy('next_attempt_at').orderBy('id').limit(CANDIDATES).execute();
    for (const task of due) {
      if (isOpen(windowOfRow(task), now)) continue;
      await trx.updateTable('agent_tasks')
        .set({ next_attempt_at: nextOpening(windowOfRow(task), now).toISOString(), updated_at: now.toISOString() })
        .where('id', '=', task.id).where('status', '=', 'SCHEDULED').execute();
    }
  }

  async function claimDue(trx: Transaction<Database>, owner: string, now: string, leaseUntil: string, limit: number): Promise<Task[]> {
    const { rows } = await sql<Task>`
      update agent_tasks set
        status = 'IN_PROGRESS', lease_owner = ${owner}, lease_expires_at = ${leaseUntil},
        attempts = agent_tasks.attempts + 1, sip_credential_id = picked.pick_credential,
        next_attempt_at = null, updated_at = ${now}
      from (
        select ranked.pick_id, ranked.pick_credential from (
          select c.pick_id, c.pick_credential, c.cap, c.running, c.due,
            row_number() over (partition by c.pick_credential order by c.due, c.pick_id) as rank
          from (
            select t.id as pick_id, t.next_attempt_at as due, n.sip_credential_id as pick_credential, cr.max_agent_tasks as cap,
              ${credentialLoad(sql.ref('n.sip_credential_id'))} as running
            from agent_tasks t
            join assistants a on a.id = t.agent_id
            left join sip_numbers n on n.id = a.telephone_number_id
            left join sip_credentials cr on cr.id = n.sip_credential_id
            where t.status = 'SCHEDULED' and t.next_attempt_at <= ${now}
              and not exists (select 1 from agent_task_pauses p where p.agent_id = t.agent_id)
              and (cr.id is null or cr.max_agent_tasks > ${credentialLoad(sql.ref('cr.id'))})
            order by t.next_attempt_at, t.id
            limit ${CANDIDATES}
          ) c
        ) ranked
        where ranked.pick_credential is null or ranked.rank + ranked.running <= ranked.cap
        order by ranked.due, ranked.pick_id
        limit ${limit}
      ) picked
      where agent_tasks.id = picked.pick_id and agent_tasks.status = 'SCHEDULED'
      returning *`.execute(trx);
    if (!rows.length) return rows;
    await recordMoves(trx, rows.map((task) => ({ task, from: 'SCHEDULED', to: 'IN_PROGRESS' })), now);
    await trx.insertInto('agent_task_attempts').values(rows.map((task) => ({
      task_id: task.id, attempt: task.attempts, organization_id: task.organization_id, started_at: now,
      ended_at: null, outcome: null, error: null, sip_code: null, call_id: null,
    }))).execute();
    return rows;
  }

  async function endAttempt(trx: Transaction<Database>, task: Task, at: string, outcome: AttemptOutcome, error: string | null, extra: { sipCode?: number; callId?: string } = {}) {
    await trx.updateTable('agent_task_attempts')
      .set({ ended_at: at, outcome, error, sip_code: extra.sipCode ?? null, call_id: extra.callId ?? null })
      .where('task_id', '=', task.id).where('attempt', '=', task.attempts).where('ended_at', 'is', null)
      .execute();
  }

  /** Times this run of the task reached voicemail before this attempt (a task started over counts afresh). */
  async function voicemailsBefore(task: Task): Promise<number> {
    const row = await kysely.selectFrom('agent_task_attempts').select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('task_id', '=', task.id).where('attempt', '<', task.attempts).where('outcome', 'in', [...VOICEMAIL_OUTCOMES])
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async function record(task: Task, outcome: DialOutcome): Promise<void> {
    const now = clock.now();
    const at = now.toISOString();
    const reachedVoicemail = outcome.status === 'voicemail' || outcome.status === 'voicemail_left';
    const voicemails = reachedVoicemail ? { reached: (await voicemailsBefore(task)) + 1, max: options.maxVoicemails } : undefined;
    const verdict = judge(outcome, voicemails);
    const cleared = { lease_owner: null, lease_expires_at: null };
    const conclusionId = 'conclusionId' in outcome ? (outcome.conclusionId ?? null) : null;
    let to: Transition;
    if (verdict.status === 'COMPLETED') {
      to = { status: 'COMPLETED', set: { ...cleared, completed_at: at, last_error: null, conclusion_id: conclusionId } };
    } else if (verdict.status === 'RETRY' && task.attempts < task.max_attempts) {
      const next = nextOpening(windowOfRow(task), new Date(now.getTime() + backoffMs(options.retry, task.attempts)));
      to = { status: 'SCHEDULED', set: { ...cleared, next_attempt_at: next.toISOString(), last_error: `attempt ${task.attempts}: ${verdict.error}` } };
    } else {
      to = { status: 'FAILED', set: { ...cleared, completed_at: at, last_error: `attempt ${task.attempts}: ${verdict.error}` } };
    }
    const extra = { ...(outcome.sipCode ? { sipCode: outcome.sipCode } : {}), ...(outcome.callId ? { callId: outcome.callId } : {}) };
    await kysely.transaction().execute(async (trx) => {
      if (!(await moveTask(trx, task, 'IN_PROGRESS', to, at, task.lease_owner ?? undefined))) return;
      await endAttempt(trx, task, at, outcome.status, verdict.error, extra);
    });
  }

  return {
    name: TASK_JOB,
    concurrency: options.concurrency ?? 100,
    leaseMs: options.leaseMs,

    async claim({ owner, now, leaseUntil, limit }) {
      // Another process holding the claim lock is taking what is due: skip this poll rather than queue.
      return withClaimLock(db, CREDENTIAL_LOCK, async (trx) => {
        await deferClosedWindows(trx, now);
        return claimDue(trx, owner, now.toISOString(), leaseUntil.toISOString(), limit);
      }, { busy: 'skip', whenBusy: [] as Task[] });
    },

    async run(task, signal) {
      let outcome: DialOutcome;
      try {
        outcome = await options.dialer.dial({
          taskId: task.id, organizationId: task.organization_id, agentId: task.agent_id, targetNumber: task.target_number,
          userValues: readJson<Record<string, unknown>>(task.user_values), sipCredentialId: task.sip_credential_id,
          attempt: task.attempts, signal,
        });
      } catch (err) {
        outcome = { status: 'failed', error: err instanceof Error ? err.message : 'dialer failed', retryable: true };
      }
      // Cancelled, or the lease was lost: whoever moved the task owns its record now.
      if (signal.aborted) return;
      await record(task, outcome).catch((err: unknown) => log.error({ err, taskId: task.id }, 'could not record call outcome'));
    },

    async renew({ owner, ids, leaseUntil }) {
      const rows = await kysely.updateTable('agent_tasks').set({ lease_expires_at: leaseUntil.toISOString() })
        .where('id', 'in', ids).where('status', '=', 'IN_PROGRESS').where('lease_owner', '=', owner)
        .returning('id').execute();
      return new Set(rows.map((r) => r.id));
    },

    /** Tasks whose worker stopped renewing: the attempt counts as failed, and the task goes back in line. */
    async reclaim(now) {
      const at = now.toISOString();
      const atParam = timestampParam(db.dialect, at);
      return kysely.transaction().execute(async (trx) => {
        const { rows } = await sql<Task>`
          update agent_tasks set
            status = case when attempts < max_attempts then 'SCHEDULED' else 'FAILED' end,
            next_attempt_at = case when attempts < max_attempts then ${atParam} else null end,
            completed_at = case when attempts < max_attempts then null else ${atParam} end,
            last_error = 'attempt ' || attempts || ': the worker running it stopped (lease expired)',
            lease_owner = null, lease_expires_at = null, updated_at = ${at}
          where status = 'IN_PROGRESS' and lease_expires_at < ${at}
          returning *`.execute(trx);
        const moves: Move[] = rows.map((task) => ({ task, from: 'IN_PROGRESS', to: task.status as Move['to'], lastError: task.last_error }));
        await recordMoves(trx, moves, at);
        for (const task of rows) await endAttempt(trx, task, at, 'lease_expired', task.last_error);
        return rows.length;
      });
    },
  };
}
