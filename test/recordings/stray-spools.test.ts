// A process that dies between a recording's `ready` and the spool's removal leaves a spool file
// nobody removes: the recordings sweep removes spools whose recording is ready, deleted or
// unknown once they are old enough, and never the spool of a call still running or of an
// upload still to do.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTestApp, createTenant, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { until } from '../helpers/until.ts';
import type { RecordingSink } from '../../src/calls/recording/recorder.ts';
import { recordingStore } from '../../src/modules/recordings/recordings.store.ts';
import { recordingsSweep } from '../../src/modules/recordings/recordings.sweep.ts';
import { openRecordingStorage, type RecordingStorage } from '../../src/modules/recordings/storage.ts';

/** Older than the sweep's five minutes by far: a slow machine cannot bring it under. */
const OLD_MS = 60 * 60_000;

for (const dialect of DIALECTS) {
  describe(`stray recording spools (${dialect})`, () => {
    let t: TestApp;
    let dir: string;
    let storage: RecordingStorage;
    let orgPath: string;
    let assistantId: string;
    const clock = { now: () => new Date() };
    /** Sinks of calls left running, finished when the test ends. */
    const open: RecordingSink[] = [];

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'parley-stray-spools-'));
      t = await buildTestApp(dialect, { PARLEY_RECORDINGS_DIR: dir }, { clock });
      storage = openRecordingStorage(t.config);
      const tenant = await createTenant(t);
      orgPath = tenant.orgPath;
      assistantId = (await t.call('POST', `${orgPath}/assistants`, { body: { name: 'Recorded', recording: { enabled: true } } })).json().data.id;
    });
    after(async () => {
      for (const sink of open) await sink.finish({ bytes: 8000 * 4, durationMs: 1000 });
      await storage.objects.close();
      await t.close();
      rmSync(dir, { recursive: true, force: true });
    });

    /** A call (ringing) with a recording spooled as a call leaves it; `finished`: its row is `uploading`, else still `recording`. */
    async function spooled(finished: boolean): Promise<{ callId: string; spool: string }> {
      const callId = (await t.call('POST', `${orgPath}/assistants/${assistantId}/calls`, { body: {} })).json().data.id as string;
      const sink = recordingStore(t.ctx, storage).open(callId, { sampleRate: 8000, channels: 2 });
      sink.write(Buffer.alloc(8000 * 4));
      if (finished) await sink.finish({ bytes: 8000 * 4, durationMs: 1000 });
      else open.push(sink);
      const row = await until('the recording row', () => t.db.kysely.selectFrom('call_recordings').select('spool_path').where('call_id', '=', callId).executeTakeFirst(), Boolean, 10_000);
      return { callId, spool: row!.spool_path! };
    }
    const setRecording = (callId: string, status: string) =>
      t.db.kysely.updateTable('call_recordings').set({ status, spool_path: null }).where('call_id', '=', callId).execute();
    const endCall = (callId: string) =>
      t.db.kysely.updateTable('calls').set({ status: 'ended', ended_at: clock.now().toISOString() }).where('id', '=', callId).execute();
    const age = (path: string) => utimesSync(path, new Date(Date.now() - OLD_MS), new Date(Date.now() - OLD_MS));

    it('removes old spools of ready, deleted and unknown recordings; keeps running calls\', uploads\' and fresh ones', { timeout: 60_000 }, async () => {
      // The process died after marking these stored (or deleted) and before removing their spool.
      const ready = await spooled(true);
      await setRecording(ready.callId, 'ready');
      await endCall(ready.callId);
      const deleted = await spooled(true);
      await setRecording(deleted.callId, 'deleted');
      await endCall(deleted.callId);
      const unknown = join(storage.spoolDir, `${randomUUID()}.rec`);
      writeFileSync(unknown, 'sealed bytes of a recording this database does not know');
      // Still needed: a call running (its recording deleted meanwhile, or still recording), an upload to do.
      const running = await spooled(false);
      const runningDeleted = await spooled(false);
      await setRecording(runningDeleted.callId, 'deleted');
      const uploading = await spooled(true);
      await endCall(uploading.callId);
      const notASpool = join(storage.spoolDir, 'README.txt');
      writeFileSync(notASpool, 'not a spool');
      const fresh = join(storage.spoolDir, `${randomUUID()}.rec`);
      writeFileSync(fresh, 'a call just starting: its file comes a moment before its row');
      for (const path of [ready.spool, deleted.spool, unknown, running.spool, runningDeleted.spool, uploading.spool, notASpool]) age(path);

      const sweep = recordingsSweep(t.ctx, storage);
      assert.equal(await sweep.run(clock.now()), 3);
      for (const gone of [ready.spool, deleted.spool, unknown]) assert.equal(existsSync(gone), false, `${gone} removed`);
      for (const kept of [running.spool, runningDeleted.spool, uploading.spool, notASpool, fresh]) assert.equal(existsSync(kept), true, `${kept} kept`);
      assert.equal(await sweep.run(clock.now()), 0, 'nothing more to do');
      const rows = await t.db.kysely.selectFrom('call_recordings').select(['call_id', 'status']).where('call_id', 'in', [running.callId, uploading.callId]).execute();
      assert.deepEqual(new Map(rows.map((r) => [r.call_id, r.status])), new Map([[running.callId, 'recording'], [uploading.callId, 'uploading']]));

      // The fresh one is a stray too once old enough (its call never got a row), by the injected clock.
      const later = new Date(clock.now().getTime() + 10 * 60_000);
      assert.equal(await sweep.run(later), 1);
      assert.equal(existsSync(fresh), false);
      assert.equal(existsSync(running.spool), true, 'a running call\'s spool, however old');
    });
  });
}
