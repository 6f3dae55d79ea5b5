import { Type, type Static } from 'typebox';
import { DateTime, Uuid } from '../../http/schemas.ts';
import { ATTEMPT_OUTCOMES } from './outcomes.ts';

export const TASK_STATUSES = ['PENDING', 'SCHEDULED', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export const MAX_BATCH = 1000;

const UserValues = Type.Record(Type.String({ maxLength: 100 }), Type.Unknown(), {
  description: 'User-specific data; fills {{name}} placeholders in the prompt and greeting',
  maxProperties: 100,
});

export const AgentTask = Type.Object(
  {
    id: Uuid,
    agentId: Uuid,
    userValues: UserValues,
    targetNumber: Type.String({ description: 'E.164' }),
    allowedHoursBegin: Type.Union([Type.Integer({ minimum: 0, maximum: 23 }), Type.Null()]),
    allowedHours: Type.Union([Type.Integer({ minimum: 1, maximum: 24 }), Type.Null()]),
    onlyWeekdays: Type.Boolean(),
    timezone: Type.Union([Type.String(), Type.Null()], { description: 'IANA zone of the window; null means UTC' }),
    status: Type.String({ enum: [...TASK_STATUSES] }),
    attempts: Type.Integer(),
    maxAttempts: Type.Integer(),
    nextAttemptAt: Type.Union([DateTime, Type.Null()]),
    lastError: Type.Union([Type.String(), Type.Null()]),
    conclusionId: Type.Union([Type.String(), Type.Null()]),
    createdAt: DateTime,
    updatedAt: DateTime,
    completedAt: Type.Union([DateTime, Type.Null()]),
    agentVersion: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: "The agent version this task's calls run; null: the agent's current version when each call starts" }),
  },
  { title: 'AgentTask' },
);
export type AgentTask = Static<typeof AgentTask>;

export const AgentTaskCreate = Type.Object(
  {
    userValues: Type.Optional(UserValues),
    targetNumber: Type.String({ minLength: 1, maxLength: 40, description: 'E.164; spaces, dashes, dots and parentheses are stripped' }),
    allowedHoursBegin: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 23 }), Type.Null()], { description: '0-23, start hour of the window (UTC unless timezone); set with allowedHours, or neither' })),
    allowedHours: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 24 }), Type.Null()], { description: '1-24, length of the window in hours; set with allowedHoursBegin, or neither' })),
    // No schema default: a generator (openapi-typescript) would make a body field with one required.
    onlyWeekdays: Type.Optional(Type.Boolean({ description: 'true restricts calls to Monday to Friday; default false' })),
    timezone: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
    maxAttempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, description: 'Default 3' })),
    execute: Type.Optional(Type.Boolean({ description: 'true schedules the task (SCHEDULED); false keeps it PENDING' })),
    agentVersion: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 2_147_483_647 }), Type.Null()], {
      description: "Pins a version of the agent (GET …/agents/{agentId}/versions): the task's calls run it. Absent or null: the agent's current version when each call starts",
    })),
  },
  {
    additionalProperties: false,
    title: 'AgentTaskCreate',
    examples: [{ userValues: { firstName: 'Ada' }, targetNumber: '+49 30 1234567', allowedHoursBegin: 9, allowedHours: 8, onlyWeekdays: true, execute: true }],
  },
);
export type AgentTaskCreate = Static<typeof AgentTaskCreate>;

export const AgentTaskBatch = Type.Object(
  { tasks: Type.Array(AgentTaskCreate, { minItems: 1, maxItems: MAX_BATCH }) },
  { additionalProperties: false, title: 'AgentTaskBatch' },
);

/** Whether an agent's tasks are paused (POST …/tasks/pause and …/resume answer it too). */
export const PauseState = Type.Object(
  {
    paused: Type.Boolean({ description: 'true: no new task call starts for this agent' }),
    pausedAt: Type.Union([DateTime, Type.Null()], { description: 'When the pause began; null when not paused' }),
  },
  { title: 'AgentTaskPauseState' },
);
export type PauseState = Static<typeof PauseState>;

/** The filters of the task list. */
export const TaskFilters = { status: Type.Optional(Type.String({ enum: [...TASK_STATUSES], description: 'Only tasks in this status' })) };

export const AgentParams = Type.Object({ vendorId: Uuid, organizationId: Uuid, agentId: Uuid });
export const TaskParams = Type.Object({ vendorId: Uuid, organizationId: Uuid, agentId: Uuid, taskId: Uuid });

export const TaskAttempt = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1 }),
    startedAt: DateTime,
    endedAt: Type.Union([DateTime, Type.Null()], { description: 'null while the attempt runs' }),
    outcome: Type.Union([Type.String({ enum: [...ATTEMPT_OUTCOMES] }), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
    sipCode: Type.Union([Type.Integer(), Type.Null()], { description: 'The final SIP status of the call, when one was placed' }),
    callId: Type.Union([Uuid, Type.Null()], { description: 'The call this attempt placed' }),
  },
  { title: 'AgentTaskAttempt' },
);
export type TaskAttempt = Static<typeof TaskAttempt>;
