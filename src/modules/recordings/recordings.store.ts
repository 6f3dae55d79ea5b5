import { randomBytes } from 'node:crypto';
import { open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { RecordingSink, RecordingStore } from '../../calls/recording/recorder.ts';
import type { Log } from '../../calls/record.ts';
import type { Context } from '../../context.ts';
import { sealChunkParts, streamHeader } from '../../crypto/chunked-cipher.ts';
import { RETRY_WINDOW_MS } from '../events/schedule.ts';
import { makePrivateDir, type RecordingStorage } from './storage.ts';

/** Plaintext bytes sealed together: 2 s of 8 kHz stereo; a seek decrypts at most two of them more than it needs. */
export const CHUNK_BYTES = 64 * 1024;

/** A recording's key in the store. */
export const objectKeyOf = (organizationId: string, callId: string) => `${organizationId}/${callId}.rec`;

interface Spool {
  file: FileHandle;
  path: string;
  key: Buffer;
  header: Buffer;
}

/**
 * Recordings as calls make them: each one is sealed chunk by chunk into a spool file (0600) with
 * a data key of its own while the call runs, and when the call ends its row becomes the job
 * that stores it away (recordings.jobs.ts). Nothing of a recording is ever written unsealed.
 */
export function recordingStore(ctx: Pick<Context, 'db' | 'clock' | 'secrets' | 'log'>, storage: RecordingStorage): RecordingStore {
  return { open: (callId, audio) => new SpoolWriter(ctx, storage, callId, audio.sampleRate, audio.channels) };
}

class SpoolWriter implements RecordingSink {
  private readonly spool: Promise<Spool | null>;
  /** The spool once it is open: chunks are sealed as they fill, with no copy kept. */
  private ready: Spool | null = null;
  /** The chunk being filled: one buffer per recording, reused (the collector has nothing to reclaim per chunk). */
  private readonly plain = Buffer.allocUnsafe(CHUNK_BYTES);
  private filled = 0;
  private index = 0;
  private writes: Promise<void> = Promise.resolve();
  /** A write failed: the spool has a hole, and the recording is not kept. */
  private broken = false;

  constructor(
    private readonly ctx: Pick<Context, 'db' | 'clock' | 'secrets' | 'log'>,
    private readonly storage: RecordingStorage,
    private readonly callId: string,
    private readonly sampleRate: number,
    private readonly channels: number,
  ) {
    this.spool = this.begin().then((spool) => (this.ready = spool)).catch((err: unknown) => {
      (ctx.log as Log).error({ err, callId }, 'could not start the call recording; the call goes on unrecorded');
      return null;
    });
  }

  /** Copies `pcm` (the recorder reuses its buffer), sealing each chunk as it fills. */
  write(pcm: Buffer): void {
    for (let from = 0; from < pcm.length;) {
      const n = Math.min(pcm.length - from, CHUNK_BYTES - this.filled);
      pcm.copy(this.plain, this.filled, from, from + n);
      this.filled += n;
      from += n;
      if (this.filled === CHUNK_BYTES) this.seal(false);
    }
  }

  async finish(summary: { bytes: number; durationMs: number }): Promise<void> {
    this.seal(true);
    await this.writes;
    const spool = await this.spool;
    if (!spool) return;
    await spool.file.sync();
    await spool.file.close();
    const now = this.ctx.clock.now();
    if (this.broken) {
      await this.ctx.db.kysely.updateTable('call_recordings').set({ status: 'failed', spool_path: null, last_error: 'the recording could not be written to the spool', updated_at: now.toISOString() })
        .where('call_id', '=', this.callId).where('status', '=', 'recording').execute();
      return void (await rm(spool.path, { force: true }));
    }
    const stored = await this.ctx.db.kysely.updateTable('call_recordings').set({
      status: 'uploading', bytes: summary.bytes, duration_ms: summary.durationMs, attempts: 0,
      next_attempt_at: now.toISOString(), retry_until: new Date(now.getTime() + RETRY_WINDOW_MS).toISOString(), updated_at: now.toISOString(),
    }).where('call_id', '=', this.callId).where('status', '=', 'recording').executeTakeFirst();
    // Deleted while the call ran: nothing of it is kept.
    if (Number(stored.numUpdatedRows) !== 1) await rm(spool.path, { force: true });
  }

  private async begin(): Promise<Spool> {
    const { db, clock, secrets } = this.ctx;
    const call = await db.kysely.selectFrom('calls').select('organization_id').where('id', '=', this.callId).executeTakeFirstOrThrow();
    await makePrivateDir(this.storage.spoolDir);
    const path = join(this.storage.spoolDir, `${this.callId}.rec`);
    const key = randomBytes(32);
    const header = streamHeader(CHUNK_BYTES);
    const file = await open(path, 'wx', 0o600);
    await file.write(header);
    const at = clock.now().toISOString();
    await db.kysely.insertInto('call_recordings').values({
      call_id: this.callId, organization_id: call.organization_id, status: 'recording', storage: this.storage.objects.kind,
      object_key: objectKeyOf(call.organization_id, this.callId), spool_path: path, data_key: secrets.seal(key.toString('base64')),
      sample_rate: this.sampleRate, channels: this.channels, chunk_bytes: CHUNK_BYTES, bytes: 0, duration_ms: 0, attempts: 0,
      next_attempt_at: null, retry_until: null, lease_owner: null, lease_expires_at: null, last_error: null, ready_at: null, deleted_at: null,
      created_at: at, updated_at: at,
    }).execute();
    return { file, path, key, header };
  }

  /** Seals the chunk filled so far (at once when the spool is open; else a copy waits for it) and queues its write. */
  private seal(last: boolean): void {
    const index = this.index++;
    const plain = this.plain.subarray(0, this.filled);
    this.filled = 0;
    const open = this.ready;
    const sealed = open ? sealChunkParts(open.key, open.header, index, plain, last) : null;
    const waiting = sealed ? null : Buffer.from(plain);
    this.writes = this.writes.then(async () => {
      const spool = await this.spool;
      if (spool) await spool.file.writev(sealed ?? sealChunkParts(spool.key, spool.header, index, waiting!, last));
    }).catch((err: unknown) => {
      this.broken = true;
      (this.ctx.log as Log).error({ err, callId: this.callId }, 'could not write the call recording');
    });
  }
}
