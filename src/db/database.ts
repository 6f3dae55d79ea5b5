import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { DatabaseConfig } from '../config.ts';
import type { Database } from './schema.ts';

export type Dialect = 'sqlite' | 'postgres';

export interface Db {
  readonly kysely: Kysely<Database>;
  readonly dialect: Dialect;
  close(): Promise<void>;
}

const PG_TIMESTAMPTZ = 1184;
const PG_TIMESTAMP = 1114;
const PG_INT8 = 20;

/** Per-pool type parsers, so that rows look the same on both dialects. */
function pgTypes(): pg.CustomTypesConfig {
  const parseDate = pg.types.getTypeParser(PG_TIMESTAMPTZ) as (value: string) => Date;
  const iso = (value: string) => parseDate(value).toISOString();
  return {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
      if (oid === PG_TIMESTAMPTZ || oid === PG_TIMESTAMP) return iso;
      if (oid === PG_INT8) return (value: string) => Number(value);
      return pg.types.getTypeParser(oid, format) as (value: string) => unknown;
    }) as pg.CustomTypesConfig['getTypeParser'],
  };
}

export function openDatabase(config: DatabaseConfig, options: { poolSize?: number } = {}): Db {
  if (config.dialect === 'sqlite') {
    if (config.filename !== ':memory:') mkdirSync(dirname(config.filename), { recursive: true });
    const sqlite = new SQLite(config.filename);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
    const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
    return { kysely, dialect: 'sqlite', close: () => kysely.destroy() };
  }
  const pool = new pg.Pool({
    connectionString: config.connectionString,
    max: options.poolSize ?? 10,
    types: pgTypes(),
  });
  // An idle client that loses its server must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { kysely, dialect: 'postgres', close: () => kysely.destroy() };
}

export async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db.kysely);
}
