import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { DatabaseConfig } from '../../src/config.ts';
import type { Dialect } from '../../src/db/database.ts';

/**
 * The dialects every suite runs on. scripts/test.sh starts a throwaway PostgreSQL cluster and
 * sets PARLEY_TEST_PG_URL; asking for postgres without one is an error, never a silent skip.
 */
export const DIALECTS: Dialect[] = (process.env.PARLEY_TEST_DIALECTS ?? 'sqlite,postgres')
  .split(',')
  .map((d) => d.trim())
  .filter(Boolean) as Dialect[];

if (DIALECTS.includes('postgres') && !process.env.PARLEY_TEST_PG_URL) {
  throw new Error('PostgreSQL tests need PARLEY_TEST_PG_URL (run through `npm test`, or set PARLEY_TEST_DIALECTS=sqlite)');
}

export interface TestDatabase {
  config: DatabaseConfig;
  url: string;
  drop(): Promise<void>;
}

/** A fresh, empty database of the dialect: a temp file for SQLite, a new database in the cluster for PostgreSQL. */
export async function createTestDatabase(dialect: Dialect): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'parley-test-'));
    const filename = join(dir, 'parley.db');
    return {
      config: { dialect, filename },
      url: `sqlite:${filename}`,
      drop: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
    };
  }
  const adminUrl = process.env.PARLEY_TEST_PG_URL as string;
  const name = `parley_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    config: { dialect, connectionString: url.toString() },
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}
