import { rm } from 'node:fs/promises';
import { sql, type Selectable } from 'kysely';
import type { Context } from '../../context.ts';
import { ChunkLayout } from '../../crypto/chunked-cipher.ts';
import type { JobKind } from '../../jobs/runner.ts';
import { enqueueEvent } from '../events/outbox.ts';
import { nextAttemptAt } from '../events/schedule.ts';
import type { CallRecordingTable } from './recordings.table.ts';
import type { RecordingStorage } from './storage.ts';

export const RECORDING_JOB = 'recording_store';

type RecordingRow = Selectable<CallRecordingTable>;

export interface RecordingJob {
  readonly id: string;
  readonly row: RecordingRow;
}

/** The recording as the call's read shape and the recording_ready event show it. */
export function recordingSummary(row: Pick<RecordingRow, 'status' | 'duration_ms' | 'bytes' | 'channels' | 'sample_rate'>) {
  return { status: row.status, durationMs: Number(row.duration_ms), bytes: Number(row.bytes), channels: row.channels, sampleRate: row.sample_rate };
}

/**
 * Storing recordings away once their call has ended, as the runner's jobs: a claim leases due
 * `uploading` rows, the sealed spool is moved into the folder or uploaded to the bucket, and only
 * then is the row `ready` (with recording_ready queued in the same transaction). A failure is
 * kept on the row and tried again with the webhook backoff for 24 hours, then the recording is
 * `failed`. A process that dies mid-upload leaves the row `uploading` under its lease: once the
 * lease expires any process takes it up again from the spool (an S3 PUT is all or nothing).
 */
export function recordingJobs(ctx: Context, storage: RecordingStorage, options: { leaseMs: number; concurrency?: number; random?: () => number }): JobKind<RecordingJob> {
  const { db, clock, log } = ctx;
  const { kysely, dialect } = db;

  async function stored(row: RecordingRow): Promise<void> {
    const at = clock.now();
    const kept = await kysely.transaction().execute(async (trx) => {
      const result = await trx.updateTable('call_recordings')
        .set({ status: 'ready', ready_at: at.toISOString(), spool_path: null, lease_owner: null, lease_expires_at: null, last_error: null, updated_at: at.toISOString() })
        .where('call_id', '=', row.call_id).where('lease_owner', '=', row.lease_owner).where('status', '=', 'uploading')
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return false;
      const call = await trx.selectFrom('calls').select(['kind', 'assistant_id', 'conclusion_id']).where('id', '=', row.call_id).executeTakeFirst();
      if (call) {
        await enqueueEvent(trx, {
          organizationId: row.organization_id, sourceKind: call.kind as 'assistant' | 'agent', sourceId: call.assistant_id, type: 'recording_ready',
          payload: { callId: row.call_id, conclusionId: call.conclusion_id, recording: recordingSummary({ ...row, status: 'ready' }), readyAt: at.toISOString() },
        }, at);
      }
      return true;
    });
    // Deleted while it was being stored: what was stored goes too.
    if (!kept) await storage.objects.remove(row.object_key).catch(() => undefined);
    if (row.spool_path) await rm(row.spool_path, { force: true });
  }

  async function failed(row: RecordingRow, error: string): Promise<void> {
    const now = clock.now();
    const attempt = row.attempts + 1;
    const next = nextAttemptAt(now, attempt, row.retry_until ?? now.toISOString(), options.random);
    const result = await kysely.updateTable('call_recordings')
      .set({
        status: next ? 'uploading' : 'failed', attempts: attempt, next_attempt_at: next?.toISOString() ?? null,
        lease_owner: null, lease_expires_at: null, last_error: error, updated_at: now.toISOString(),
      })
      .where('call_id', '=', row.call_id).where('lease_owner', '=', row.lease_owner).where('status', '=', 'uploading')
      .executeTakeFirst();
    if (!next && Number(result.numUpdatedRows) === 1) {
      log.warn({ callId: row.call_id, attempts: attempt, error }, 'a call recording could not be stored and is dropped');
      if (row.spool_path) await rm(row.spool_path, { force: true });
    }
  }

  return {
    name: RECORDING_JOB,
    concurrency: options.concurrency ?? 4,
    leaseMs: options.leaseMs,

    async claim({ owner, now, leaseUntil, limit }) {
      const at = now.toISOString();
      const lock = dialect === 'postgres' ? sql`for update skip locked` : sql``;
      const { rows } = await sql<RecordingRow>`
        update call_recordings set lease_owner = ${owner}, lease_expires_at = ${leaseUntil.toISOString()}, next_attempt_at = null, updated_at = ${at}
        where call_id in (
          select call_id from call_recordings where status = 'uploading' and next_attempt_at <= ${at}
          order by next_attempt_at, call_id limit ${limit} ${lock}
        ) and status = 'uploading' and next_attempt_at <= ${at}
        returning *`.execute(kysely);
      return rows.map((row) => ({ id: row.call_id, row }));
    },

    async run({ row }, signal) {
      if (!row.spool_path) return failed(row, 'the spooled recording is missing');
      try {
        await storage.objects.put(row.object_key, row.spool_path, new ChunkLayout(row.chunk_bytes, Number(row.bytes)).sealedBytes);
      } catch (err) {
        if (signal.aborted) return; // stopping: the lease brings it back
        return failed(row, err instanceof Error ? err.message.slice(0, 300) : 'the recording could not be stored');
      }
      await stored(row);
    },

    async renew({ owner, ids, leaseUntil }) {
      const rows = await kysely.updateTable('call_recordings').set({ lease_expires_at: leaseUntil.toISOString() })
        .where('call_id', 'in', ids).where('lease_owner', '=', owner).where('status', '=', 'uploading')
        .returning('call_id').execute();
      return new Set(rows.map((r) => r.call_id));
    },

    async reclaim(now) {
      const at = now.toISOString();
      const rows = await kysely.updateTable('call_recordings')
        .set({ lease_owner: null, lease_expires_at: null, next_attempt_at: at, last_error: 'the process storing it stopped before it finished (lease expired)', updated_at: at })
        .where('status', '=', 'uploading').where('lease_owner', 'is not', null).where('lease_expires_at', '<', at)
        .returning('call_id').execute();
      return rows.length;
    },
  };
}
