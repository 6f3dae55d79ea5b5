import { rm } from 'node:fs/promises';
import type { Context } from '../../context.ts';
import type { Sweep } from '../../jobs/runner.ts';
import { removeStraySpools } from './stray-spools.ts';
import type { RecordingStorage } from './storage.ts';

const BATCH = 100;
/** A call ended this long ago whose recording was never handed over: its process died mid-call. */
const ORPHAN_MS = 5 * 60_000;

/**
 * Recordings past PARLEY_RECORDING_RETENTION_DAYS (counted from their call's start) are removed
 * from the folder or bucket and kept as `deleted`; those whose spool never became a whole
 * recording (the process died during the call: the last chunk was never sealed) are `failed`,
 * their spool removed when it is on this machine; and spool files nothing will read again (a
 * process died between a recording's `ready` and the spool's removal) are removed.
 */
export function recordingsSweep(ctx: Context, storage: RecordingStorage): Sweep {
  const { kysely } = ctx.db;
  return {
    name: 'recordings_retention',
    everyMs: 60_000,
    async run(now) {
      const at = now.toISOString();
      const expired = await kysely.selectFrom('call_recordings').select(['call_id', 'status', 'object_key', 'spool_path'])
        .where('status', 'in', ['ready', 'failed']).where('created_at', '<', new Date(now.getTime() - ctx.config.recordingRetentionMs).toISOString())
        .limit(BATCH).execute();
      let changed = 0;
      for (const row of expired) {
        if (row.status === 'ready') await storage.objects.remove(row.object_key);
        if (row.spool_path) await rm(row.spool_path, { force: true });
        const result = await kysely.updateTable('call_recordings').set({ status: 'deleted', deleted_at: at, spool_path: null, updated_at: at })
          .where('call_id', '=', row.call_id).where('status', '=', row.status).executeTakeFirst();
        changed += Number(result.numUpdatedRows);
      }
      const orphans = await kysely.selectFrom('call_recordings').innerJoin('calls', 'calls.id', 'call_recordings.call_id')
        .select(['call_recordings.call_id', 'call_recordings.spool_path'])
        .where('call_recordings.status', '=', 'recording').where('calls.status', '=', 'ended')
        .where('calls.ended_at', '<', new Date(now.getTime() - ORPHAN_MS).toISOString())
        .limit(BATCH).execute();
      for (const row of orphans) {
        if (row.spool_path) await rm(row.spool_path, { force: true });
        const result = await kysely.updateTable('call_recordings')
          .set({ status: 'failed', spool_path: null, last_error: 'the process recording the call stopped during it', updated_at: at })
          .where('call_id', '=', row.call_id).where('status', '=', 'recording').executeTakeFirst();
        changed += Number(result.numUpdatedRows);
      }
      return changed + (await removeStraySpools(ctx, storage.spoolDir, now, ORPHAN_MS, BATCH));
    },
  };
}
