import type { Kysely, Transaction } from 'kysely';
import type { Clock } from '../../clock.ts';
import { bumpCounter } from '../../db/counters.ts';
import type { Database } from '../../db/schema.ts';
import { badRequest, conflict, notFound, type ErrorDetail } from '../../http/errors.ts';
import { checkNumber } from './phone.ts';
import { moveTask, taskCounter, findTask, windowOfRow } from './tasks.repository.ts';
import type { AgentTaskCreate, TaskStatus } from './tasks.schemas.ts';
import { nextOpening, windowProblems, type TaskWindow } from './window.ts';

export interface TaskDeps {
  db: Kysely<Database>;
  clock: Clock;
  defaultMaxAttempts: number;
  /** Stops a call this process is running for the task (a cancel from another process is seen at the next lease renewal). */
  abortRunning(taskId: string): void;
}

/** A task's userValues, as JSON. */
export const MAX_USER_VALUES = 16 * 1024;

export const UNFINISHED: TaskStatus[] = ['PENDING', 'SCHEDULED', 'IN_PROGRESS'];

/** A create body's allowed window; absent fields mean no restriction (null) and every day. */
function windowOfBody(body: AgentTaskCreate): TaskWindow {
  return { allowedHoursBegin: body.allowedHoursBegin ?? null, allowedHours: body.allowedHours ?? null, onlyWeekdays: body.onlyWeekdays ?? false, timezone: body.timezone ?? null };
}

function problemsOf(body: AgentTaskCreate, prefix: string): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const target = checkNumber(body.targetNumber, 'dial');
  if (target.problem) problems.push({ path: `${prefix}targetNumber`, message: target.problem });
  const window = windowOfBody(body);
  problems.push(...windowProblems(window).map((p) => ({ ...p, path: prefix + p.path })));
  if (JSON.stringify(body.userValues ?? {}).length > MAX_USER_VALUES) {
    problems.push({ path: `${prefix}userValues`, message: `must be at most ${MAX_USER_VALUES} bytes as JSON` });
  }
  return problems;
}

export async function requireAgent(db: Kysely<Database>, organizationId: string, agentId: string) {
  const agent = await db.selectFrom('assistants').select('id').where('organization_id', '=', organizationId).where('kind', '=', 'agent').where('id', '=', agentId).executeTakeFirst();
  if (!agent) throw notFound('Agent');
}

/** Creates one task or a batch, all or nothing: one invalid item rejects the whole batch with per-item errors. */
export async function createTasks(deps: TaskDeps, organizationId: string, agentId: string, bodies: AgentTaskCreate[], batch: boolean) {
  await requireAgent(deps.db, organizationId, agentId);
  const problems = bodies.flatMap((body, i) => problemsOf(body, batch ? `tasks[${i}].` : ''));
  if (problems.length) throw badRequest(batch ? 'Invalid tasks; none was created' : 'Invalid task', problems);
  const now = deps.clock.now();
  const at = now.toISOString();
  const rows = bodies.map((body) => {
    const window = windowOfBody(body);
    const status: TaskStatus = body.execute ? 'SCHEDULED' : 'PENDING';
    return {
      id: crypto.randomUUID(),
      organization_id: organizationId,
      agent_id: agentId,
      status,
      user_values: JSON.stringify(body.userValues ?? {}),
      target_number: checkNumber(body.targetNumber, 'dial').number as string,
      allowed_hours_begin: window.allowedHoursBegin,
      allowed_hours: window.allowedHours,
      only_weekdays: window.onlyWeekdays ? 1 : 0,
      timezone: window.timezone,
      attempts: 0,
      max_attempts: body.maxAttempts ?? deps.defaultMaxAttempts,
      next_attempt_at: status === 'SCHEDULED' ? nextOpening(window, now).toISOString() : null,
      last_error: null,
      conclusion_id: null,
      sip_credential_id: null,
      lease_owner: null,
      lease_expires_at: null,
      completed_at: null,
      created_at: at,
      updated_at: at,
    };
  });
  await deps.db.transaction().execute(async (trx) => {
    for (let i = 0; i < rows.length; i += 200) await trx.insertInto('agent_tasks').values(rows.slice(i, i + 200)).execute();
    await bumpCounter(trx, taskCounter(agentId), rows.length);
    for (const status of ['PENDING', 'SCHEDULED'] as const) {
      const n = rows.filter((r) => r.status === status).length;
      if (n) await bumpCounter(trx, taskCounter(agentId, status), n);
    }
  });
  return rows;
}

async function loadTask(deps: TaskDeps, organizationId: string, agentId: string, taskId: string) {
  const row = await findTask(deps.db, organizationId, agentId, taskId);
  if (!row) throw notFound('Agent task');
  return row;
}

/** PENDING, FAILED or CANCELLED → SCHEDULED; a failed or cancelled task starts over with fresh attempts. */
export async function executeTask(deps: TaskDeps, organizationId: string, agentId: string, taskId: string) {
  const row = await loadTask(deps, organizationId, agentId, taskId);
  const from = row.status as TaskStatus;
  if (!['PENDING', 'FAILED', 'CANCELLED'].includes(from)) throw conflict(`A ${from} task cannot be executed`);
  const now = deps.clock.now();
  const set = { attempts: 0, last_error: null, completed_at: null, next_attempt_at: nextOpening(windowOfRow(row), now).toISOString() };
  const moved = await deps.db.transaction().execute((trx) => moveTask(trx, row, from, { status: 'SCHEDULED', set }, now.toISOString()));
  if (!moved) throw conflict('The task changed meanwhile; read it again');
}

export async function cancelTask(deps: TaskDeps, organizationId: string, agentId: string, taskId: string) {
  const row = await loadTask(deps, organizationId, agentId, taskId);
  const from = row.status as TaskStatus;
  if (!UNFINISHED.includes(from)) throw conflict(`A ${from} task cannot be cancelled`);
  const at = deps.clock.now().toISOString();
  const set = { next_attempt_at: null, lease_owner: null, lease_expires_at: null, completed_at: at };
  const moved = await deps.db.transaction().execute(async (trx) => {
    if (!(await moveTask(trx, row, from, { status: 'CANCELLED', set }, at))) return false;
    await trx.updateTable('agent_task_attempts').set({ ended_at: at, outcome: 'cancelled', error: 'cancelled' })
      .where('task_id', '=', taskId).where('ended_at', 'is', null).execute();
    return true;
  });
  if (!moved) throw conflict('The task changed meanwhile; read it again');
  if (from === 'IN_PROGRESS') deps.abortRunning(taskId);
}

export async function deleteTask(deps: TaskDeps, organizationId: string, agentId: string, taskId: string) {
  const row = await loadTask(deps, organizationId, agentId, taskId);
  if (row.status === 'IN_PROGRESS') throw conflict('The task is in progress; cancel it first');
  await deps.db.transaction().execute(async (trx) => {
    const result = await trx.deleteFrom('agent_tasks').where('id', '=', taskId).where('status', '=', row.status).executeTakeFirst();
    if (Number(result.numDeletedRows) !== 1) throw conflict('The task changed meanwhile; read it again');
    await bumpCounter(trx, taskCounter(agentId), -1);
    await bumpCounter(trx, taskCounter(agentId, row.status), -1);
  });
}

export async function setPaused(deps: TaskDeps, organizationId: string, agentId: string, paused: boolean) {
  await requireAgent(deps.db, organizationId, agentId);
  if (paused) {
    await deps.db
      .insertInto('agent_task_pauses')
      .values({ agent_id: agentId, paused_at: deps.clock.now().toISOString() })
      .onConflict((oc) => oc.column('agent_id').doNothing())
      .execute();
  } else {
    await deps.db.deleteFrom('agent_task_pauses').where('agent_id', '=', agentId).execute();
  }
}

export async function isPaused(db: Kysely<Database>, agentId: string): Promise<boolean> {
  return Boolean(await db.selectFrom('agent_task_pauses').select('agent_id').where('agent_id', '=', agentId).executeTakeFirst());
}

/**
 * An agent with unfinished tasks cannot be deleted (they would be orphaned mid-campaign); its
 * finished tasks go with it.
 */
export const unfinishedTasksGuard = async (trx: Transaction<Database>, kind: string, id: string): Promise<string | null> => {
  if (kind !== 'agent') return null;
  const open = await trx.selectFrom('agent_tasks').select('status').where('agent_id', '=', id).where('status', 'in', UNFINISHED).executeTakeFirst();
  if (open) return 'The agent still has unfinished tasks (PENDING, SCHEDULED or IN_PROGRESS); cancel or delete them first';
  await trx.deleteFrom('agent_tasks').where('agent_id', '=', id).execute();
  await trx.deleteFrom('counters').where('key', 'like', `${taskCounter(id)}%`).execute();
  return null;
};
