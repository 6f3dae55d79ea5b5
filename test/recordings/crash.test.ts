// A process killed with SIGKILL in the middle of an upload leaves the recording `uploading` (and
// nothing in the bucket), and the next process finishes it: real `parley serve` children, the
// bucket s3rver behind the SigV4 proxy, which holds the first upload half-read.
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTestApp, createTenant, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { startTestS3, type TestS3 } from '../helpers/s3.ts';
import { freePort, kill, startService } from '../helpers/service-process.ts';
import { until } from '../helpers/until.ts';
import { recordingStore } from '../../src/modules/recordings/recordings.store.ts';
import { openRecordingStorage } from '../../src/modules/recordings/storage.ts';
import { splitWav } from './support.ts';

/** 40 s of 8 kHz stereo: big enough that an upload is seen half-way. */
const SECONDS = 40;

for (const dialect of DIALECTS) {
  describe(`a recording upload killed half-way (${dialect})`, () => {
    let t: TestApp;
    let s3: TestS3;
    let dir: string;
    const children: ChildProcess[] = [];

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'parley-recording-crash-'));
      s3 = await startTestS3();
      t = await buildTestApp(dialect, { PARLEY_RECORDINGS_DIR: dir, ...s3.env });
    });
    after(async () => {
      for (const child of children) await kill(child);
      await t.close();
      await s3.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('leaves it uploading, and the next process stores it whole', { timeout: 120_000 }, async () => {
      const tenant = await createTenant(t);
      const assistant = (await t.call('POST', `${tenant.orgPath}/assistants`, { body: { name: 'Recorded', recording: { enabled: true } } })).json().data.id;
      const callId = (await t.call('POST', `${tenant.orgPath}/assistants/${assistant}/calls`, { body: {} })).json().data.id as string;
      // A recording as a call leaves it: sealed in the spool, its row due to be stored.
      const pcm = Buffer.alloc(SECONDS * 8000 * 4);
      for (let i = 0; i < pcm.length / 2; i++) pcm.writeInt16LE(Math.round(8000 * Math.sin(i / 7) + ((i * 7919) % 2000) - 1000), i * 2);
      const storage = openRecordingStorage(t.config);
      const sink = recordingStore(t.ctx, storage).open(callId, { sampleRate: 8000, channels: 2 });
      for (let at = 0; at < pcm.length; at += 32_000) sink.write(pcm.subarray(at, at + 32_000));
      await sink.finish({ bytes: pcm.length, durationMs: SECONDS * 1000 });
      await storage.objects.close();
      const row = () => t.db.kysely.selectFrom('call_recordings').selectAll().where('call_id', '=', callId).executeTakeFirstOrThrow();
      assert.equal((await row()).status, 'uploading');
      const spool = (await row()).spool_path!;

      const env = {
        DATABASE_URL: t.database.url, PARLEY_SECRET_KEY: t.config.secretKey.toString('base64'), PARLEY_SCHEDULER: 'on',
        PARLEY_LEASE_SECONDS: '2', PARLEY_RECORDINGS_DIR: dir, ...s3.env,
      };
      s3.holdUploads = true;
      const first = await startService({ ...env, PORT: String(await freePort()) });
      children.push(first.child);
      await until('the upload to be half-way', () => s3.held(), (n) => n === 1, 30_000);
      await kill(first.child);

      const left = await row();
      assert.equal(left.status, 'uploading', 'a killed upload is not ready');
      assert.ok(left.lease_owner, 'still under the dead process\'s lease');
      assert.equal(await s3.object(`${tenant.organizationId}/${callId}.rec`), null, 'nothing half-written in the bucket');
      assert.ok(existsSync(spool), 'the spool is kept for the next try');

      s3.holdUploads = false;
      const second = await startService({ ...env, PORT: String(await freePort()) });
      children.push(second.child);
      const stored = await until('the next process to store it', row, (r) => r.status === 'ready', 60_000);
      assert.equal(stored.spool_path, null);
      // The row turns ready first and the spool goes right after (a crash between leaves a stray
      // file, never a ready row without its object), so it is awaited, not checked at once.
      await until('the spool to be removed once stored', async () => existsSync(spool), (exists) => !exists, 10_000);
      assert.ok(await s3.object(`${tenant.organizationId}/${callId}.rec`));
      await kill(second.child);

      const wav = await t.call('GET', `${tenant.orgPath}/calls/${callId}/recording`);
      assert.equal(wav.statusCode, 200);
      const body = wav.rawPayload;
      assert.ok(body.subarray(44).equals(pcm), 'the stored recording decrypts to what was recorded');
      assert.equal(splitWav(body).left.length, SECONDS * 8000);
      assert.deepEqual(s3.refused, []);
    });
  });
}
