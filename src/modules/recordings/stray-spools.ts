import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Context } from '../../context.ts';

/** A spool's file name: the call's id and `.rec` (recordings.store.ts). */
const SPOOL_NAME = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.rec$/i;
/** Statuses whose spool is never read again: stored (`ready`), removed, or given up. */
const DONE = new Set(['ready', 'deleted', 'failed']);

/**
 * Removes spool files in `spoolDir` that nothing will read again: the recording is `ready`,
 * `deleted` or `failed`, or has no row at all, its call is not running, and the file was last
 * written at least `minAgeMs` before `now` (a running call writes its spool every few seconds,
 * and a starting one creates the file just before its row). Such a file is left by a process
 * that died between marking its recording stored and removing the spool. A spool still
 * `recording` or `uploading` is the call's or the upload job's; other files are not touched.
 * Answers how many it removed, at most `limit` a run.
 */
export async function removeStraySpools(ctx: Pick<Context, 'db'>, spoolDir: string, now: Date, minAgeMs: number, limit: number): Promise<number> {
  const names = await readdir(spoolDir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  const byCall = new Map<string, string>();
  for (const name of names) {
    const id = SPOOL_NAME.exec(name)?.[1]?.toLowerCase();
    if (id && byCall.size < limit * 10) byCall.set(id, join(spoolDir, name));
  }
  if (!byCall.size) return 0;
  const { kysely } = ctx.db;
  const ids = [...byCall.keys()];
  const recordings = new Map((await kysely.selectFrom('call_recordings').select(['call_id', 'status']).where('call_id', 'in', ids).execute()).map((r) => [r.call_id, r.status]));
  const calls = new Map((await kysely.selectFrom('calls').select(['id', 'status']).where('id', 'in', ids).execute()).map((c) => [c.id, c.status]));
  let removed = 0;
  for (const [id, path] of byCall) {
    if (removed >= limit) break;
    const status = recordings.get(id);
    if (status !== undefined && !DONE.has(status)) continue;
    const call = calls.get(id);
    if (call !== undefined && call !== 'ended') continue;
    const written = await stat(path).catch(() => null);
    if (!written || now.getTime() - written.mtimeMs < minAgeMs) continue;
    await rm(path, { force: true });
    removed++;
  }
  return removed;
}
