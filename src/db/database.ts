import { closeSync, existsSync, openSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, sql, type CompiledQuery } from 'kysely';
import pg from 'pg';
import { ensurePrivateDir, type DatabaseConfig } from '../config.ts';
import { changeMarkOf } from './change-mark.ts';
import type { Database } from './schema.ts';
import { waitingSqliteDialect, type SqliteWriter } from './sqlite-writer.ts';

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
  /**
   * A number that changes whenever anyone commits a write to the database: this process's
   * writer or another process (SQLite's WAL-index header, read from the `-shm` file every
   * connection shares: change-mark.ts; about 0.7 µs). A value read
   * after taking the mark is current for as long as the mark stays the same, so a hot read can be
   * kept without ever being stale (the auth epoch, GET one assistant). Absent where the database
   * cannot say so this cheaply (PostgreSQL, an in-memory SQLite): those reads run every time.
   */
  readonly changeMark?: () => number;
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
/** How long opening the database waits for another process's lock (before the service serves anything). */
const OPEN_BUSY_MS = 5_000;
/** How long the read-only SQLite connection waits for a lock (an exclusive one: WAL reads never wait for writers). */
const READER_BUSY_MS = 250;

/** PostgreSQL waits (docs/limits.md); migrations lift the statement timeout for their own transaction. */
export const PG_TIMEOUTS: PgTimeouts = { connectMs: 5_000, statementMs: 15_000, idleInTransactionMs: 30_000 };

export interface PgTimeouts {
  /** For a new connection to be set up. */
  readonly connectMs: number;
  /** For one statement, on the server; the client gives up 2 s later (a server that no longer answers). */
  readonly statementMs: number;
  /** For a transaction that sits idle. */
  readonly idleInTransactionMs: number;
}

/** What a ROLLBACK with nothing to roll back runs instead (see withStatementCache): Kysely only reads `reader` and calls `run`. */
const NOTHING_TO_ROLL_BACK = {
  reader: false,
  run: () => ({ changes: 0, lastInsertRowid: 0 }),
  all: () => [],
  iterate: () => [][Symbol.iterator](),
} as unknown as SQLite.Statement;

/**
 * Kysely prepares every query anew, and preparing costs more than running a small query on
 * better-sqlite3. The queries are built from a fixed set of shapes with bound parameters, so
 * their SQL texts repeat: keep the prepared statements, least recently used out first.
 *
 * On some errors (SQLITE_FULL, SQLITE_IOERR, …) SQLite has already rolled the transaction back
 * by itself; the ROLLBACK that follows would then fail with "no transaction is active" and
 * replace the real error (a full disk would be logged as "cannot rollback"). A ROLLBACK with no
 * transaction open is skipped, so the error that ended the transaction is the one reported.
 */
function withStatementCache(sqlite: SQLite.Database): SqliteWriter {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    get inTransaction() {
      return sqlite.inTransaction;
    },
    prepare(text: string) {
      if (text === 'rollback' && !sqlite.inTransaction) return NOTHING_TO_ROLL_BACK;
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

export function openDatabase(config: DatabaseConfig, options: { poolSize?: number; pgTimeouts?: PgTimeouts } = {}): Db {
  if (config.dialect === 'sqlite') {
    if (config.filename !== ':memory:') {
      // The data folder 0700 and the database 0600 before SQLite opens it: its WAL and shared-memory
      // files take the database file's mode.
      ensurePrivateDir(dirname(config.filename));
      if (!existsSync(config.filename)) closeSync(openSync(config.filename, 'a', 0o600));
    }
    // Opening waits for locks as SQLite does (processes starting together on a new file all switch it
    // to WAL), before anything is served; from then on no busy_timeout: waiting for the write lock
    // inside SQLite would hold the event loop (sqlite-writer.ts waits on a timer instead).
    const sqlite = new SQLite(config.filename, { timeout: OPEN_BUSY_MS });
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('busy_timeout = 0');
    const kysely = new Kysely<Database>({ dialect: waitingSqliteDialect(withStatementCache(sqlite)) });
    if (config.filename === ':memory:') {
      return { kysely, dialect: 'sqlite', read: async (q) => (await kysely.executeQuery(q)).rows, close: () => kysely.destroy() };
    }
    // WAL readers do not wait for writers; only an exclusive lock (a journal mode change, a
    // VACUUM) makes them wait, and then briefly, since that wait holds the event loop too.
    const readOnly = new SQLite(config.filename, { readonly: true, timeout: READER_BUSY_MS });
    const reader = withStatementCache(readOnly);
    const changeMark = changeMarkOf(config.filename, readOnly);
    return {
      kysely,
      dialect: 'sqlite',
      read: <Row>(q: CompiledQuery<Row>) => Promise.resolve(reader.prepare(q.sql).all(...q.parameters) as Row[]),
      changeMark: () => changeMark.read(),
      close: async () => {
        changeMark.close();
        reader.close();
        await kysely.destroy();
      },
    };
  }
  const timeouts = options.pgTimeouts ?? PG_TIMEOUTS;
  const pool = new pg.Pool({
    connectionString: config.connectionString,
    max: options.poolSize ?? 10,
    types: pgTypes(),
    // A database that is down or frozen must turn into a quick 503, not requests hanging for
    // minutes: bounded waits for a connection, for a statement, and for an idle transaction.
    connectionTimeoutMillis: timeouts.connectMs,
    statement_timeout: timeouts.statementMs,
    query_timeout: timeouts.statementMs + 2_000,
    idle_in_transaction_session_timeout: timeouts.idleInTransactionMs,
  });
  // A client that loses its server must not crash the process: an idle one reports to the pool,
  // one checked out between two statements (inside a transaction) to itself, and with no listener
  // that would be an uncaught exception. Its next query fails, and the pool drops it.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { kysely, dialect: 'postgres', read: async (q) => (await kysely.executeQuery(q)).rows, close: () => kysely.destroy() };
}

/** One read of committed data, on the read connection: never queued behind a write, never waiting for the write lock. */
export async function ping(db: Db): Promise<void> {
  await db.read(sql`select 1`.compile(db.kysely));
}

/** Free space below this on the database's filesystem counts as full: SQLite needs room for its WAL. */
const MIN_FREE_BYTES = 1024 * 1024;

/**
 * Whether an embedded database can take no more data: its filesystem is out of space, or the
 * file is at its page limit with no free page left. (PostgreSQL's disk is the server's: a full
 * one is known from the errors writes get, see the error handler.)
 */
export async function storageFull(db: Db, config: DatabaseConfig): Promise<boolean> {
  if (db.dialect !== 'sqlite' || config.dialect !== 'sqlite' || config.filename === ':memory:') return false;
  const space = await statfs(dirname(config.filename));
  if (space.bavail * space.bsize < MIN_FREE_BYTES) return true;
  // The page limit is a setting of the connection that writes, so it is read there.
  const pragma = async (name: string) => Number(Object.values((await sql.raw(`pragma ${name}`).execute(db.kysely)).rows[0] ?? {})[0]);
  return (await pragma('page_count')) >= (await pragma('max_page_count')) && (await pragma('freelist_count')) === 0;
}
