import { closeSync, existsSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql, type CompiledQuery } from 'kysely';
import pg from 'pg';
import { ensurePrivateDir, type DatabaseConfig } from '../config.ts';
import type { Database } from './schema.ts';

export type Dialect = 'sqlite' | 'postgres';

export interface Db {
  readonly kysely: Kysely<Database>;
  readonly dialect: Dialect;
  /**
   * Runs a compiled read outside any transaction, seeing only committed data. On SQLite it
   * uses a second, read-only connection (WAL lets it read beside the writer) without the
   * writer's queue or a promise per step; on PostgreSQL it is the pool.
   */
  read<Row>(query: CompiledQuery<Row>): Promise<Row[]>;
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

const STATEMENT_CACHE_SIZE = 500;

/** PostgreSQL waits (docs/limits.md); migrations lift the statement timeout for their own transaction. */
export const PG_TIMEOUTS = { connectMs: 5_000, statementMs: 15_000, idleInTransactionMs: 30_000 } as const;

/**
 * Kysely prepares every query anew, and preparing costs more than running a small query on
 * better-sqlite3. The queries are built from a fixed set of shapes with bound parameters, so
 * their SQL texts repeat: keep the prepared statements, least recently used out first.
 */
function withStatementCache(sqlite: SQLite.Database) {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(text: string) {
      let statement = cache.get(text);
      if (statement) {
        cache.delete(text);
      } else {
        statement = sqlite.prepare(text);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
      }
      cache.set(text, statement);
      return statement;
    },
  };
}

export function openDatabase(config: DatabaseConfig, options: { poolSize?: number } = {}): Db {
  if (config.dialect === 'sqlite') {
    if (config.filename !== ':memory:') {
      // The data folder 0700 and the database 0600 before SQLite opens it: its WAL and shared-memory
      // files take the database file's mode.
      ensurePrivateDir(dirname(config.filename));
      if (!existsSync(config.filename)) closeSync(openSync(config.filename, 'a', 0o600));
    }
    const sqlite = new SQLite(config.filename);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
    const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
    if (config.filename === ':memory:') {
      return { kysely, dialect: 'sqlite', read: async (q) => (await kysely.executeQuery(q)).rows, close: () => kysely.destroy() };
    }
    const reader = withStatementCache(new SQLite(config.filename, { readonly: true }));
    return {
      kysely,
      dialect: 'sqlite',
      read: <Row>(q: CompiledQuery<Row>) => Promise.resolve(reader.prepare(q.sql).all(...q.parameters) as Row[]),
      close: async () => {
        reader.close();
        await kysely.destroy();
      },
    };
  }
  const pool = new pg.Pool({
    connectionString: config.connectionString,
    max: options.poolSize ?? 10,
    types: pgTypes(),
    // A database that is down or frozen must turn into a quick 503, not requests hanging for
    // minutes: bounded waits for a connection, for a statement, and for an idle transaction.
    connectionTimeoutMillis: PG_TIMEOUTS.connectMs,
    statement_timeout: PG_TIMEOUTS.statementMs,
    query_timeout: PG_TIMEOUTS.statementMs + 2_000,
    idle_in_transaction_session_timeout: PG_TIMEOUTS.idleInTransactionMs,
  });
  // An idle client that loses its server must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { kysely, dialect: 'postgres', read: async (q) => (await kysely.executeQuery(q)).rows, close: () => kysely.destroy() };
}

export async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db.kysely);
}
