import { sql, type Insertable, type Selectable, type Transaction } from 'kysely';
import { bumpCounter, readCounter } from '../../db/counters.ts';
import { enqueueEvent } from '../events/outbox.ts';
import type { Database, Executor } from '../../db/schema.ts';
import { fetchPage, type PageQuery } from '../../http/pagination.ts';
import type { AgentTaskAttemptTable, AgentTaskTable } from './tasks.table.ts';
import { readBool, readJson } from '../../db/values.ts';
import { TASK_STATUSES, type AgentTask, type TaskAttempt, type TaskStatus } from './tasks.schemas.ts';
import type { TaskWindow } from './window.ts';

const COUNTER_PREFIX = 'agent_tasks:';

/** Totals per agent, and per agent and status (the list filter), kept beside the rows. */
export const taskCounter = (agentId: string, status?: string) => (status ? `${COUNTER_PREFIX}${agentId}:${status}` : `${COUNTER_PREFIX}${agentId}`);

/** A task row's allowed window, as the window functions take it. */
export function windowOfRow(row: Pick<Selectable<AgentTaskTable>, 'allowed_hours_begin' | 'allowed_hours' | 'only_weekdays' | 'timezone'>): TaskWindow {
  return { allowedHoursBegin: row.allowed_hours_begin, allowedHours: row.allowed_hours, onlyWeekdays: readBool(row.only_weekdays), timezone: row.timezone };
}

export function toTask(row: Selectable<AgentTaskTable>): AgentTask {
  return {
    id: row.id,
    agentId: row.agent_id,
    userValues: readJson<Record<string, unknown>>(row.user_values),
    targetNumber: row.target_number,
    allowedHoursBegin: row.allowed_hours_begin,
    allowedHours: row.allowed_hours,
    onlyWeekdays: readBool(row.only_weekdays),
    timezone: row.timezone,
    status: row.status,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    nextAttemptAt: row.next_attempt_at,
    lastError: row.last_error,
    conclusionId: row.conclusion_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    completedAt: row.completed_at,
    agentVersion: row.agent_version,
  };
}

export function toAttempt(row: Selectable<AgentTaskAttemptTable>): TaskAttempt {
  return {
    attempt: row.attempt,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    outcome: row.outcome,
    error: row.error,
    sipCode: row.sip_code,
    callId: row.call_id,
  };
}

export function findTask(db: Executor, organizationId: string, agentId: string, id: string) {
  return db
    .selectFrom('agent_tasks')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('agent_id', '=', agentId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export const TASK_SORT = { createdAt: 'created_at', updatedAt: 'updated_at', nextAttemptAt: 'next_attempt_at', targetNumber: 'target_number' };
export const ATTEMPT_SORT = { attempt: 'attempt', startedAt: 'started_at' };

/** An agent's tasks, of one status when `status` is given (each status keeps its own counter). */
export async function listTasks(db: Executor, organizationId: string, agentId: string, status: TaskStatus | undefined, query: PageQuery) {
  let select = db.selectFrom('agent_tasks').selectAll().where('organization_id', '=', organizationId).where('agent_id', '=', agentId);
  if (status) select = select.where('status', '=', status);
  const page = await fetchPage(select, query, TASK_SORT, () => readCounter(db, taskCounter(agentId, status)));
  return { ...page, items: page.items.map(toTask) };
}

/** A task's attempts. A task has at most maxAttempts (10) of them: counting them costs nothing. */
export async function listAttempts(db: Executor, taskId: string, query: PageQuery) {
  const select = db.selectFrom('agent_task_attempts').selectAll().where('task_id', '=', taskId);
  const count = () => select.clearSelect().select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow().then((r) => Number(r.n));
  const page = await fetchPage(select, query, ATTEMPT_SORT, count, { tiebreak: 'attempt' });
  return { ...page, items: page.items.map(toAttempt) };
}

/** New tasks of one agent (in chunks the databases' parameter limits allow), with their counters. */
export async function insertTasks(db: Executor, agentId: string, rows: readonly Insertable<AgentTaskTable>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 200) await db.insertInto('agent_tasks').values(rows.slice(i, i + 200)).execute();
  await bumpCounter(db, taskCounter(agentId), rows.length);
  for (const status of ['PENDING', 'SCHEDULED'] as const) {
    const n = rows.filter((r) => r.status === status).length;
    if (n) await bumpCounter(db, taskCounter(agentId, status), n);
  }
}

export async function hasTasksIn(db: Executor, agentId: string, statuses: readonly TaskStatus[]): Promise<boolean> {
  return Boolean(await db.selectFrom('agent_tasks').select('status').where('agent_id', '=', agentId).where('status', 'in', statuses).executeTakeFirst());
}

/** All of an agent's tasks and their counters (the agent is being deleted). */
export async function deleteAgentTasks(db: Executor, agentId: string): Promise<void> {
  await db.deleteFrom('agent_tasks').where('agent_id', '=', agentId).execute();
  await db.deleteFrom('counters').where('key', 'like', `${taskCounter(agentId)}%`).execute();
}

/** Ends the attempt still open on a task (a cancel: the outcome and the error say so). */
export async function endOpenAttempts(db: Executor, taskId: string, at: string, outcome: 'cancelled'): Promise<void> {
  await db.updateTable('agent_task_attempts').set({ ended_at: at, outcome, error: outcome }).where('task_id', '=', taskId).where('ended_at', 'is', null).execute();
}

/** Deletes a task that is still in the status it was read in (false when it moved meanwhile), with its counters. */
export async function deleteTaskRow(db: Executor, task: Pick<Selectable<AgentTaskTable>, 'id' | 'agent_id' | 'status'>): Promise<boolean> {
  const result = await db.deleteFrom('agent_tasks').where('id', '=', task.id).where('status', '=', task.status).executeTakeFirst();
  if (Number(result.numDeletedRows) !== 1) return false;
  await bumpCounter(db, taskCounter(task.agent_id), -1);
  await bumpCounter(db, taskCounter(task.agent_id, task.status), -1);
  return true;
}

export function findPause(db: Executor, agentId: string) {
  return db.selectFrom('agent_task_pauses').select('paused_at').where('agent_id', '=', agentId).executeTakeFirst();
}

/** Pauses an agent's tasks since `at` (an existing pause keeps its start), or lifts the pause (null). */
export async function writePause(db: Executor, agentId: string, at: string | null): Promise<void> {
  if (at === null) await db.deleteFrom('agent_task_pauses').where('agent_id', '=', agentId).execute();
  else await db.insertInto('agent_task_pauses').values({ agent_id: agentId, paused_at: at }).onConflict((oc) => oc.column('agent_id').doNothing()).execute();
}

export interface Transition {
  status: TaskStatus;
  set?: Partial<Omit<AgentTaskTable, 'id' | 'status' | 'only_weekdays' | 'user_values'>>;
}

/** One task's status change, for the events and counters that go with it. */
export interface Move {
  task: { id: string; agent_id: string; organization_id: string };
  from: TaskStatus;
  to: TaskStatus;
  lastError?: string | null | undefined;
  conclusionId?: string | null | undefined;
}

/**
 * Moves a task from one status to another, only if it is still in `from` (and, for a running
 * task, still leased by `leaseOwner`), with its events and counters in the same transaction.
 * Returns false when the task had moved meanwhile: the caller lost the race.
 */
export async function moveTask(
  trx: Transaction<Database>,
  task: { id: string; agent_id: string; organization_id: string },
  from: TaskStatus,
  to: Transition,
  at: string,
  leaseOwner?: string,
): Promise<boolean> {
  let query = trx
    .updateTable('agent_tasks')
    .set({ ...to.set, status: to.status, updated_at: at })
    .where('id', '=', task.id)
    .where('status', '=', from);
  if (leaseOwner) query = query.where('lease_owner', '=', leaseOwner);
  const result = await query.executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) return false;
  await recordMoves(trx, [{ task, from, to: to.status, lastError: to.set?.last_error, conclusionId: to.set?.conclusion_id }], at);
  return true;
}

/**
 * The side of status changes already written (one statement may move many tasks): a
 * task_status_changed event through the outbox for each, and the per-status counters.
 */
export async function recordMoves(trx: Transaction<Database>, moves: readonly Move[], at: string): Promise<void> {
  const deltas = new Map<string, number>();
  for (const move of moves) {
    if (move.from === move.to) continue;
    // The event goes out through the outbox with the state change, or not at all.
    await enqueueEvent(trx, {
      organizationId: move.task.organization_id,
      sourceKind: 'agent',
      sourceId: move.task.agent_id,
      type: 'task_status_changed',
      payload: {
        taskId: move.task.id,
        agentId: move.task.agent_id,
        previousStatus: move.from,
        status: move.to,
        ...(move.lastError !== undefined ? { lastError: move.lastError } : {}),
        ...(move.conclusionId !== undefined ? { conclusionId: move.conclusionId } : {}),
      },
    }, new Date(at));
    for (const [status, delta] of [[move.from, -1], [move.to, 1]] as const) {
      const key = taskCounter(move.task.agent_id, status);
      deltas.set(key, (deltas.get(key) ?? 0) + delta);
    }
  }
  // Counter rows are locked in one global order (by key), so that two transitions running at
  // once in opposite directions cannot deadlock on them.
  for (const key of [...deltas.keys()].sort()) {
    const delta = deltas.get(key) ?? 0;
    if (delta) await bumpCounter(trx, key, delta);
  }
}

/**
 * An organization's tasks by status, from the kept per-agent counters: one primary-key read per
 * agent and status, whatever the number of tasks. The key is built in SQL exactly as taskCounter
 * spells it (ids are stored and printed in lower case on both dialects).
 */
export async function countTasksByStatus(db: Executor, organizationId: string): Promise<Record<TaskStatus, number>> {
  const statuses = TASK_STATUSES.map((status) => sql`select ${sql.lit(status)} as status`);
  const rows = await db
    .selectFrom('assistants as a')
    .innerJoin(sql<{ status: TaskStatus }>`(${sql.join(statuses, sql` union all `)})`.as('s'), (join) => join.onTrue())
    .innerJoin('counters as c', (join) => join.on('c.key', '=', sql<string>`${sql.lit(COUNTER_PREFIX)} || cast(a.id as text) || ':' || s.status`))
    .select(['s.status', (eb) => eb.fn.sum<number | string>('c.value').as('n')])
    .where('a.organization_id', '=', organizationId)
    .where('a.kind', '=', 'agent')
    .groupBy('s.status')
    .execute();
  const counts = Object.fromEntries(TASK_STATUSES.map((status) => [status, 0])) as Record<TaskStatus, number>;
  for (const row of rows) counts[row.status] = Number(row.n);
  return counts;
}

/** The agent versions an agent's tasks pin: kept past the versions limit while a task names them. */
export async function taskVersionPins(db: Executor, kind: string, agentId: string): Promise<number[]> {
  if (kind !== 'agent') return [];
  const rows = await db.selectFrom('agent_tasks').select('agent_version').distinct().where('agent_id', '=', agentId).where('agent_version', 'is not', null).execute();
  return rows.flatMap((r) => (r.agent_version === null ? [] : [r.agent_version]));
}

/** The agent version a task pins, or null (its calls run the agent's current version). */
export async function pinnedAgentVersion(db: Executor, taskId: string): Promise<number | null> {
  return (await db.selectFrom('agent_tasks').select('agent_version').where('id', '=', taskId).executeTakeFirst())?.agent_version ?? null;
}
