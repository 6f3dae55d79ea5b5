import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import { bumpCounter } from '../../db/counters.ts';
import { enqueueEvent } from '../events/outbox.ts';
import type { Database } from '../../db/schema.ts';
import type { AgentTaskAttemptTable, AgentTaskTable } from './tasks.table.ts';
import { readBool, readJson } from '../../db/values.ts';
import { TASK_STATUSES, type AgentTask, type TaskAttempt, type TaskStatus } from './tasks.schemas.ts';
import type { TaskWindow } from './window.ts';

type Executor = Kysely<Database> | Transaction<Database>;

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
