import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EmptyEnvelope, Envelope, PageEnvelope, envelope, responses, sendCreated } from '../../http/envelope.ts';
import { notFound } from '../../http/errors.ts';
import { listQuery, pageBody } from '../../http/pagination.ts';
import { orgPath } from '../../http/schemas.ts';
import { ATTEMPT_SORT, TASK_SORT, findTask, listAttempts, listTasks, toTask } from './tasks.repository.ts';
import { AgentParams, AgentTask, AgentTaskBatch, AgentTaskCreate, PauseState, TaskAttempt, TaskFilters, TaskParams, type TaskStatus } from './tasks.schemas.ts';
import { cancelTask, createTasks, deleteTask, executeTask, pauseState, requireAgent, setPaused } from './tasks.service.ts';

export interface TaskRouteOptions {
  defaultMaxAttempts: number;
  abortRunning(taskId: string): void;
}

const tags = ['Agent tasks'];
const BASE = '/agents/:agentId/tasks';
const read = { auth: { scope: 'organization', permission: 'tasks:read' } } as const;
const write = { auth: { scope: 'organization', permission: 'tasks:write' } } as const;
const create = { ...write, idempotent: true } as const;
const ListQuery = listQuery(TASK_SORT, TaskFilters, 'createdAt,asc');
const AttemptsQuery = listQuery(ATTEMPT_SORT, {}, 'attempt,desc');

export const taskRoutes: FastifyPluginAsyncTypebox<TaskRouteOptions> = async (app, opts) => {
  const { kysely } = app.ctx.db;
  const deps = { db: kysely, clock: app.ctx.clock, defaultMaxAttempts: opts.defaultMaxAttempts, abortRunning: (id: string) => opts.abortRunning(id) };
  const location = (p: { vendorId: string; organizationId: string; agentId: string }, id: string) => `${orgPath(p)}/agents/${p.agentId}/tasks/${id}`;

  app.post(BASE, {
    config: create,
    schema: {
      tags, operationId: 'createAgentTask', summary: 'Create an agent task', description: 'execute true → SCHEDULED, false or absent → PENDING. Accepts Idempotency-Key.',
      params: AgentParams, body: AgentTaskCreate, response: responses(201, Envelope(AgentTask), [409, 422]),
    },
  }, async (request, reply) => {
    const [row] = await createTasks(deps, request.params.organizationId, request.params.agentId, [request.body], false);
    return sendCreated(request, reply, location(request.params, row?.id ?? ''), toTask(row as never));
  });

  app.post(`${BASE}/batch`, {
    config: create,
    schema: {
      tags, operationId: 'batchCreateAgentTasks', summary: 'Create up to 1,000 agent tasks at once, all or nothing',
      description: 'One invalid task rejects the batch; each error names its item (tasks[12].targetNumber). Accepts Idempotency-Key.',
      params: AgentParams, body: AgentTaskBatch, response: responses(201, Envelope(Type.Array(AgentTask)), [409, 422]),
    },
  }, async (request, reply) => {
    const rows = await createTasks(deps, request.params.organizationId, request.params.agentId, request.body.tasks, true);
    return sendCreated(request, reply, `${orgPath(request.params)}/agents/${request.params.agentId}/tasks`, rows.map((r) => toTask(r as never)));
  });

  app.get(BASE, {
    config: read,
    schema: { tags, operationId: 'listAgentTasks', summary: 'List agent tasks (filter by status)', params: AgentParams, querystring: ListQuery, response: responses(200, PageEnvelope(AgentTask)) },
  }, async (request) => {
    const { organizationId, agentId } = request.params;
    const { status, ...page } = request.query;
    await requireAgent(kysely, organizationId, agentId);
    return pageBody(request, await listTasks(kysely, organizationId, agentId, status as TaskStatus | undefined, page));
  });

  app.get(`${BASE}/:taskId`, {
    config: read,
    schema: { tags, operationId: 'getAgentTask', summary: 'Get an agent task', params: TaskParams, response: responses(200, Envelope(AgentTask)) },
  }, async (request) => {
    const { organizationId, agentId, taskId } = request.params;
    const row = await findTask(kysely, organizationId, agentId, taskId);
    if (!row) throw notFound('Agent task');
    return envelope(request, toTask(row));
  });

  app.get(`${BASE}/:taskId/attempts`, {
    config: read,
    schema: {
      tags, operationId: 'listAgentTaskAttempts', summary: "A task's attempts: when each ran, how it ended (outcome, SIP code) and the call it placed; newest first",
      params: TaskParams, querystring: AttemptsQuery, response: responses(200, PageEnvelope(TaskAttempt)),
    },
  }, async (request) => {
    const { organizationId, agentId, taskId } = request.params;
    if (!(await findTask(kysely, organizationId, agentId, taskId))) throw notFound('Agent task');
    return pageBody(request, await listAttempts(kysely, taskId, request.query));
  });

  const action = (name: 'execute' | 'cancel', summary: string, run: typeof executeTask) =>
    app.post(`${BASE}/:taskId/${name}`, {
      config: write,
      schema: { tags, operationId: `${name}AgentTask`, summary, params: TaskParams, response: responses(200, Envelope(AgentTask), [409]) },
    }, async (request) => {
      const { organizationId, agentId, taskId } = request.params;
      await run(deps, organizationId, agentId, taskId);
      const row = await findTask(kysely, organizationId, agentId, taskId);
      if (!row) throw notFound('Agent task');
      return envelope(request, toTask(row));
    });
  action('execute', 'Schedule a PENDING task (or start a FAILED or CANCELLED one over); 409 from other states', executeTask);
  action('cancel', 'Cancel a PENDING, SCHEDULED or IN_PROGRESS task (a running call is hung up); 409 from other states', cancelTask);

  app.delete(`${BASE}/:taskId`, {
    config: write,
    schema: { tags, operationId: 'deleteAgentTask', summary: 'Delete an agent task (409 while it is in progress)', params: TaskParams, response: responses(200, EmptyEnvelope, [409]) },
  }, async (request) => {
    const { organizationId, agentId, taskId } = request.params;
    await deleteTask(deps, organizationId, agentId, taskId);
    return envelope(request, null, 'Deleted');
  });

  app.get(`${BASE}/pause`, {
    config: read,
    schema: { tags, params: AgentParams, response: responses(200, Envelope(PauseState)), operationId: 'getAgentTasksPause', summary: "Whether the agent's tasks are paused, and since when" },
  }, async (request) => envelope(request, await pauseState(deps, request.params.organizationId, request.params.agentId)));

  for (const paused of [true, false]) {
    app.post(`${BASE}/${paused ? 'pause' : 'resume'}`, {
      config: write,
      schema: {
        tags, params: AgentParams, response: responses(200, Envelope(PauseState)),
        operationId: paused ? 'pauseAgentTasks' : 'resumeAgentTasks',
        summary: paused ? "Pause all of an agent's tasks: nothing new starts; running calls finish" : "Resume an agent's tasks",
      },
    }, async (request) => {
      await setPaused(deps, request.params.organizationId, request.params.agentId, paused);
      return envelope(request, await pauseState(deps, request.params.organizationId, request.params.agentId));
    });
  }
};
