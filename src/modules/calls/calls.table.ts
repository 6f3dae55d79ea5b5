import type { Bool, Json, Timestamp } from '../../db/schema.ts';

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
  /** The process holding the call (its heartbeat renews the lease); a sweep ends calls whose lease ran out. */
  lease_owner: string | null;
  lease_expires_at: Timestamp | null;
  /** Why a call failed: `{ source, statusCode, message }` (never a key). */
  failure: Json | null;
  /** The agent task whose attempt placed the call. */
  task_id: string | null;
  /** A voice call: the audio format of its client (`{ encoding, sampleRate }`); null for a text call. */
  audio: Json | null;
  /** The providers the call was set up with (`{ llm, tts?, stt? }` or `{ realtime }`). */
  providers: Json | null;
  /** Placeholders the prompt or greeting kept unfilled when the call connected (JSON array). */
  unfilled_placeholders: Json | null;
  /** A SIP call: the credentials it was placed or taken through (it counts against their maxAgentTasks). */
  sip_credential_id: string | null;
  /** A voice call with a pipeline: sound over the assistant that paused it and was no interruption. */
  false_interruptions: number | null;
  /** Answers started before the caller's turn was confirmed, and those dropped. */
  speculative_starts: number | null;
  speculative_discards: number | null;
  /** A SIP call: its media statistics (`{ packetsSent, packetsReceived, packetsLost, jitterMs }`), kept when it ends. */
  media: Json | null;
  /** The version of the assistant or agent the call runs (a task's pin, else the current one when it started). */
  assistant_version: number | null;
  /** The analysis's pass_fail verdict (null for other rubrics and unanalysed calls): the calls list filters by it. */
  success: Bool | null;
  /** A placed call with voicemail detection: who answered (human, voicemail, screening, unknown); null without detection. */
  answered_by: string | null;
  /** Its detection: `{ verdict, decidedAfterMs, action, signals }`. */
  detection: Json | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** One line of a call's log, appended as the call runs: what the user said, what the assistant said, a tool call, keys the caller pressed (`text`: the keys). */
export interface CallEntryTable {
  call_id: string;
  seq: number;
  organization_id: string;
  kind: 'user' | 'assistant' | 'tool' | 'dtmf';
  at: Timestamp;
  text: string | null;
  latency_ms: number | null;
  interrupted: Bool | null;
  /** Tool entries: the invocation; voice answers: `{ latency, endpointing }`. */
  detail: Json | null;
  /** A voice answer: ms from the caller's last speech to its first audio frame. */
  response_ms: number | null;
}

export interface ConclusionTable {
  id: string;
  organization_id: string;
  call_id: string;
  outcome: string;
  summary: string | null;
  transcript: Json;
  /** What the analysis extracted (valid against the schema), or why it could not (`{ message, errors, raw }`). */
  data: Json | null;
  data_error: Json | null;
  /** The success evaluation: a boolean, a score or words, as JSON. */
  success: Json | null;
  analyzed_at: Timestamp | null;
  /** The analysis as a durable job: pending (due at analysis_next_at), running (leased), done, failed; null: none asked. */
  analysis_status: string | null;
  analysis_attempts: number | null;
  analysis_next_at: Timestamp | null;
  analysis_retry_until: Timestamp | null;
  analysis_lease_owner: string | null;
  analysis_lease_expires_at: Timestamp | null;
  analysis_error: string | null;
  created_at: Timestamp;
}

declare module '../../db/schema.ts' {
  interface Database {
    calls: CallTable;
    call_entries: CallEntryTable;
    conclusions: ConclusionTable;
  }
}
