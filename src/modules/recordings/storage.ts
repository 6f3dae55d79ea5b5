import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Config } from '../../config.ts';
import { s3Objects } from './s3.ts';

/**
 * Where sealed recordings are kept once their call has ended: a folder, or an S3-compatible
 * bucket. Keys are `<organization id>/<call id>.rec`. What is stored is the sealed stream
 * (src/crypto/chunked-cipher.ts), never a WAV.
 */
export interface ObjectStore {
  readonly kind: 'disk' | 's3';
  /** Stores the spooled file under `key` (moved on disk, uploaded to S3). Safe to repeat after a crash. */
  put(key: string, spoolPath: string, bytes: number): Promise<void>;
  /** Bytes [start, end) of the object. */
  read(key: string, start: number, end: number): Promise<Buffer>;
  /** Removes the object; one already gone is fine. */
  remove(key: string): Promise<void>;
  close(): Promise<void>;
}

export interface RecordingStorage {
  objects: ObjectStore;
  /** Where recordings are written while their call runs. */
  spoolDir: string;
}

/** PARLEY_RECORDINGS_DIR, else `recordings/` beside the SQLite file, else ./data/recordings. */
export function recordingsDir(config: Pick<Config, 'recordingsDir' | 'database'>): string {
  if (config.recordingsDir) return config.recordingsDir;
  const { database } = config;
  if (database.dialect === 'sqlite' && database.filename !== ':memory:') return join(dirname(database.filename), 'recordings');
  return resolve('data', 'recordings');
}

export function openRecordingStorage(config: Config): RecordingStorage {
  const dir = recordingsDir(config);
  const { recordingsS3Url: url, recordingsS3Bucket: bucket, recordingsS3AccessKeyId: accessKeyId, recordingsS3SecretAccessKey: secretAccessKey } = config;
  const objects = url && bucket && accessKeyId && secretAccessKey
    ? s3Objects({ url, bucket, region: config.recordingsS3Region, accessKeyId, secretAccessKey })
    : diskObjects(dir);
  return { objects, spoolDir: join(dir, 'spool') };
}

/** Folders Parley makes for recordings are its user's alone, like the data folder. */
export const makePrivateDir = (dir: string) => mkdir(dir, { recursive: true, mode: 0o700 });

export function diskObjects(root: string): ObjectStore {
  const pathOf = (key: string) => {
    const path = resolve(root, key);
    if (!path.startsWith(resolve(root) + '/')) throw new Error('a recording key outside the recordings folder');
    return path;
  };
  return {
    kind: 'disk',
    async put(key, spoolPath, bytes) {
      const target = pathOf(key);
      await makePrivateDir(dirname(target));
      try {
        await rename(spoolPath, target);
      } catch (err) {
        // Moved already by an attempt that died before it was recorded.
        const there = await stat(target).catch(() => null);
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || there?.size !== bytes) throw err;
      }
    },
    async read(key, start, end) {
      const file = await open(pathOf(key), 'r');
      try {
        const out = Buffer.alloc(end - start);
        const { bytesRead } = await file.read(out, 0, out.length, start);
        return out.subarray(0, bytesRead);
      } finally {
        await file.close();
      }
    },
    remove: (key) => rm(pathOf(key), { force: true }),
    close: async () => {},
  };
}
