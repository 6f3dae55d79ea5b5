import type { ColumnType } from 'kysely';
import type { Timestamp } from '../../db/schema.ts';

/** A bigint column: PostgreSQL reads it back as text, SQLite as a number. */
type BigCount = ColumnType<number | string, number, number>;

/**
 * A call's recording, and the durable job that stores it once the call has ended (claimed with
 * a lease, retried with backoff): `recording` while the call runs (spooled to `spool_path`),
 * `uploading` until it is stored under `object_key`, then `ready`; `failed` when it could not
 * be kept, `deleted` once removed (by DELETE or by the retention sweep). The data key that seals
 * it is itself sealed with PARLEY_SECRET_KEY.
 */
export interface CallRecordingTable {
  call_id: string;
  organization_id: string;
  status: string;
  /** disk | s3: where object_key lives. */
  storage: string;
  object_key: string;
  spool_path: string | null;
  data_key: string;
  sample_rate: number;
  channels: number;
  chunk_bytes: number;
  /** PCM bytes (the WAV's data chunk). */
  bytes: BigCount;
  duration_ms: BigCount;
  attempts: number;
  next_attempt_at: Timestamp | null;
  retry_until: Timestamp | null;
  lease_owner: string | null;
  lease_expires_at: Timestamp | null;
  last_error: string | null;
  ready_at: Timestamp | null;
  deleted_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../db/schema.ts' {
  interface Database {
    call_recordings: CallRecordingTable;
  }
}
