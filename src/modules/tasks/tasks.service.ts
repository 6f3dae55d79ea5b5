import type { Kysely, Transaction } from 'kysely';
import type { Clock } from '../../clock.ts';
import type { Database } from '../../db/schema.ts';
import { badRequest, conflict, notFound, type ErrorDetail } from '../../http/errors.ts';
import { checkNumber } from '../../telephony/phone.ts';
import { findAssistant } from '../assistants/assistants.repository.ts';
import { existingVersions } from '../assistants/versions.repository.ts';
import {
  deleteAgentTasks, deleteTaskRow, endOpenAttempts, findPause, findTask, hasTasksIn, insertTasks, moveTask, windowOfRow, writePause,
} from './tasks.repository.ts';
import type { AgentTaskCreate, PauseState, TaskStatus } from './tasks.schemas.ts';
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
  const agent = await findAssistant(db, 'agent', organizationId, agentId);
  if (!agent) throw notFound('Agent');
  return agent;
}

/** Pinned versions the agent does not have (never made, or gone past the versions limit). */
async function pinProblems(db: Kysely<Database>, agent: { id: string; version: number }, bodies: AgentTaskCreate[], batch: boolean): Promise<ErrorDetail[]> {
  const pinned = [...new Set(bodies.flatMap((body) => (body.agentVersion ? [body.agentVersion] : [])))];
  const existing = await existingVersions(db, agent.id, pinned);
  return bodies.flatMap((body, i) => (body.agentVersion && body.agentVersion !== agent.version && !existing.has(body.agentVersion)
    ? [{ path: `${batch ? `tasks[${i}].` : ''}agentVersion`, message: `this agent has no version ${body.agentVersion} (its current version is ${agent.version}; GET …/versions lists them)` }]
    : []));
}

/** Creates one task or a batch, all or nothing: one invalid item rejects the whole batch with per-item errors. */
export async function createTasks(deps: TaskDeps, organizationId: string, agentId: string, bodies: AgentTaskCreate[], batch: boolean) {
  const agent = await requireAgent(deps.db, organizationId, agentId);
  const problems = bodies.flatMap((body, i) => problemsOf(body, batch ? `tasks[${i}].` : ''));
  problems.push(...(await pinProblems(deps.db, agent, bodies, batch)));
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
      agent_version: body.agentVersion ?? null,
      created_at: at,
      updated_at: at,
    };
  });
  await deps.db.transaction().execute((trx) => insertTasks(trx, agentId, rows));
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
    await endOpenAttempts(trx, taskId, at, 'cancelled');
    return true;
  });
  if (!moved) throw conflict('The task changed meanwhile; read it again');
  if (from === 'IN_PROGRESS') deps.abortRunning(taskId);
}

export async function deleteTask(deps: TaskDeps, organizationId: string, agentId: string, taskId: string) {
  const row = await loadTask(deps, organizationId, agentId, taskId);
  if (row.status === 'IN_PROGRESS') throw conflict('The task is in progress; cancel it first');
  await deps.db.transaction().execute(async (trx) => {
    if (!(await deleteTaskRow(trx, row))) throw conflict('The task changed meanwhile; read it again');
  });
}

export async function setPaused(deps: TaskDeps, organizationId: string, agentId: string, paused: boolean) {
  await requireAgent(deps.db, organizationId, agentId);
  await writePause(deps.db, agentId, paused ? deps.clock.now().toISOString() : null);
}

export async function pauseState(deps: TaskDeps, organizationId: string, agentId: string): Promise<PauseState> {
  await requireAgent(deps.db, organizationId, agentId);
  const pause = await findPause(deps.db, agentId);
  return { paused: Boolean(pause), pausedAt: pause?.paused_at ?? null };
}

/**
 * An agent with unfinished tasks cannot be deleted (they would be orphaned mid-campaign); its
 * finished tasks go with it.
 */
export const unfinishedTasksGuard = async (trx: Transaction<Database>, kind: string, id: string): Promise<string | null> => {
  if (kind !== 'agent') return null;
  if (await hasTasksIn(trx, id, UNFINISHED)) return 'The agent still has unfinished tasks (PENDING, SCHEDULED or IN_PROGRESS); cancel or delete them first';
  await deleteAgentTasks(trx, id);
  return null;
};
