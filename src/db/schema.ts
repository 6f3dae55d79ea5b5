import type { ColumnType } from 'kysely';
import type { CallTable, ConclusionTable } from '../modules/calls/calls.table.ts';
import type { WebhookDeliveryAttemptTable, WebhookDeliveryTable } from '../modules/events/events.table.ts';

/** Timestamps travel as ISO 8601 strings on both dialects (see db/dialects.ts). */
export type Timestamp = string;
/** JSON is written as a string; PostgreSQL (jsonb) reads back parsed, SQLite (text) as a string. */
export type Json = ColumnType<unknown, string, string>;
/** Booleans are written as 0/1, which both a PostgreSQL boolean and a SQLite integer accept. */
export type Bool = ColumnType<boolean | number, number, number>;

export interface VendorTable {
  id: string;
  name: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface OrganizationTable {
  id: string;
  vendor_id: string;
  name: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ApiTokenTable {
  id: string;
  vendor_id: string;
  organization_id: string | null;
  name: string;
  role: string | null;
  permissions: Json;
  public_id: string;
  secret_hash: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  expires_at: Timestamp | null;
  revoked_at: Timestamp | null;
}

export interface SettingTable {
  key: string;
  value: string;
}

export interface CounterTable {
  key: string;
  value: ColumnType<number, number, number>;
}

export interface IdempotencyKeyTable {
  scope: string;
  key: string;
  request_hash: string;
  status_code: number | null;
  response_body: string | null;
  location: string | null;
  created_at: Timestamp;
}

export interface StrategyTable {
  id: string;
  organization_id: string;
  name: string;
  type: string;
  parameters: Json;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AssistantTable {
  id: string;
  organization_id: string;
  kind: string;
  name: string;
  system_prompt: string | null;
  system_prompt_greeting: string | null;
  strategy_id: string | null;
  telephone_number_id: string | null;
  extensions: Json;
  call_event_hooks: Json;
  version: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

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
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AgentTaskPauseTable {
  agent_id: string;
  paused_at: Timestamp;
}

export interface SipCredentialTable {
  id: string;
  organization_id: string;
  name: string;
  hostname: string;
  port: number;
  transport: string;
  username: string;
  /** Sealed with the secret box (`enc:v1:…`); never leaves the service. */
  password_sealed: string;
  max_agent_tasks: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface SipNumberTable {
  id: string;
  organization_id: string;
  sip_credential_id: string;
  /** E.164, unique per organization. */
  number: string;
  name: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface RateLimitWindowTable {
  key: string;
  window_start: ColumnType<number, number, number>;
  used: number;
}

export interface Database {
  rate_limit_windows: RateLimitWindowTable;
  agent_tasks: AgentTaskTable;
  agent_task_pauses: AgentTaskPauseTable;
  llm_strategies: StrategyTable;
  assistants: AssistantTable;
  sip_credentials: SipCredentialTable;
  sip_numbers: SipNumberTable;
  vendors: VendorTable;
  organizations: OrganizationTable;
  api_tokens: ApiTokenTable;
  settings: SettingTable;
  counters: CounterTable;
  idempotency_keys: IdempotencyKeyTable;
  calls: CallTable;
  conclusions: ConclusionTable;
  webhook_deliveries: WebhookDeliveryTable;
  webhook_delivery_attempts: WebhookDeliveryAttemptTable;
}
