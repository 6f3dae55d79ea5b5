import type { Json, Timestamp, Bool } from '../../db/schema.ts';

export interface AgentTaskTable {
  id: string;
  organization_id: string;
  agent_id: string;
  status: string;
  user_values: Json;
  target_number: string;
  allowed_hours_begin: number | null;
  allowed_hours: number | null;
  only_weekdays: Bool;
  timezone: string | null;
  attempts: number;
  max_attempts: number;
  next_attempt_at: Timestamp | null;
  last_error: string | null;
  conclusion_id: string | null;
  sip_credential_id: string | null;
  lease_owner: string | null;
  lease_expires_at: Timestamp | null;
  completed_at: Timestamp | null;
  /** The agent version this task's calls run; null: the agent's current version when each call starts. */
  agent_version: number | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AgentTaskPauseTable {
  agent_id: string;
  paused_at: Timestamp;
}

/** One attempt of a task: when it ran, how it ended, and the call it placed. */
export interface AgentTaskAttemptTable {
  task_id: string;
  attempt: number;
  organization_id: string;
  started_at: Timestamp;
  ended_at: Timestamp | null;
  outcome: string | null;
  error: string | null;
  sip_code: number | null;
  call_id: string | null;
}

declare module '../../db/schema.ts' {
  interface Database {
    agent_tasks: AgentTaskTable;
    agent_task_pauses: AgentTaskPauseTable;
    agent_task_attempts: AgentTaskAttemptTable;
  }
}
