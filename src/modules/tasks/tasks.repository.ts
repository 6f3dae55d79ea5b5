import type { Kysely, Selectable, Transaction } from 'kysely';
import { bumpCounter } from '../../db/counters.ts';
import { enqueueEvent } from '../events/outbox.ts';
import type { AgentTaskTable, Database } from '../../db/schema.ts';
import { readBool, readJson } from '../../db/values.ts';
import type { AgentTask, TaskStatus } from './tasks.schemas.ts';
import type { TaskWindow } from './window.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/** Totals per agent, and per agent and status (the list filter), kept beside the rows. */
export const taskCounter = (agentId: string, status?: string) => (status ? `agent_tasks:${agentId}:${status}` : `agent_tasks:${agentId}`);

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

/**
 * Moves a task from one status to another, only if it is still in `from` (and, for a running
 * task, still leased by `leaseOwner`), keeping the per-status counters right in the same
 * transaction. Returns false when the task had moved meanwhile: the caller lost the race.
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
  if (from !== to.status) {
    // The event goes out through the outbox with the state change, or not at all.
    await enqueueEvent(trx, {
      organizationId: task.organization_id,
      sourceKind: 'agent',
      sourceId: task.agent_id,
      type: 'task_status_changed',
      payload: {
        taskId: task.id,
        agentId: task.agent_id,
        previousStatus: from,
        status: to.status,
        ...(to.set?.last_error !== undefined ? { lastError: to.set.last_error } : {}),
        ...(to.set?.conclusion_id !== undefined ? { conclusionId: to.set.conclusion_id } : {}),
      },
    }, new Date(at));
    // Counter rows are locked in one global order (by status name), so that two transitions
    // running at once in opposite directions cannot deadlock on them.
    const changes: [TaskStatus, number][] = [[from, -1], [to.status, 1]];
    changes.sort(([x], [y]) => x.localeCompare(y));
    for (const [status, delta] of changes) await bumpCounter(trx, taskCounter(task.agent_id, status), delta);
  }
  return true;
}
