import type { Json, Timestamp } from '../../db/schema.ts';

/** A call: `ringing` until its WebSocket connects with the token, then `active`, then `ended`. */
export interface CallTable {
  id: string;
  organization_id: string;
  /** The assistant's or agent's id (see kind). */
  assistant_id: string;
  kind: string;
  status: string;
  transport: Json;
  user_values: Json;
  trace_id: string;
  started_at: Timestamp | null;
  ended_at: Timestamp | null;
  end_reason: string | null;
  transcript: Json;
  tool_invocations: Json;
  conclusion_id: string | null;
  /** SHA-256 of the single-use connect token; cleared when it is used. */
  token_hash: string | null;
  token_expires_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ConclusionTable {
  id: string;
  organization_id: string;
  call_id: string;
  outcome: string;
  summary: string | null;
  transcript: Json;
  created_at: Timestamp;
}
