import { setTimeout as sleep } from 'node:timers/promises';
import {
  CompiledQuery, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler,
  type DatabaseConnection, type Dialect, type Driver, type Kysely, type QueryResult,
} from 'kysely';
import type SQLite from 'better-sqlite3';

/** How long a statement waits for SQLite's write lock before it fails with SQLITE_BUSY (a 503). */
export const SQLITE_LOCK_WAIT_MS = 5_000;

/** Pauses between tries, as SQLite's own busy handler spaces them; then 100 ms each. */
const PAUSES_MS = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100];

/** The writer connection as this module uses it: statements (through the cache), and whether a transaction is open. */
export interface SqliteWriter {
  prepare(text: string): SQLite.Statement;
  readonly inTransaction: boolean;
  close(): void;
}

/** The one connection's turn, taken by a query (or a transaction) and given back after. */
class Turn {
  private held: Promise<void> | null = null;
  private release: (() => void) | null = null;

  async take(): Promise<void> {
    while (this.held) await this.held;
    this.held = new Promise((resolve) => (this.release = resolve));
  }

  give(): void {
    const release = this.release;
    this.held = null;
    this.release = null;
    release?.();
  }
}

const isBusy = (err: unknown) => typeof (err as { code?: unknown })?.code === 'string' && (err as { code: string }).code.startsWith('SQLITE_BUSY');

/**
 * better-sqlite3 is synchronous: with a busy_timeout, a statement that finds the write lock held
 * by another process (the CLI, a `parley worker`, a backup) sleeps inside SQLite, and the whole
 * event loop with it: every request, `/healthz` included, and every call's audio. So the writer
 * runs with no busy_timeout, and a statement refused with SQLITE_BUSY outside a transaction
 * (BEGIN IMMEDIATE above all, where every transaction takes the lock) is tried again after a
 * pause on a timer, until SQLITE_LOCK_WAIT_MS have passed. While it pauses it gives the
 * connection's turn back, so this process's reads and other statements run meanwhile.
 * Inside a transaction the lock is held already, and an error is the transaction's to handle.
 * The pauses are real time, not the injected clock: another process holds the lock in real time.
 */
class WaitingConnection implements DatabaseConnection {
  constructor(private readonly db: SqliteWriter, private readonly turn: Turn, private readonly waitMs: number) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const deadline = performance.now() + this.waitMs;
    for (let attempt = 0; ; attempt++) {
      try {
        return this.run<R>(query);
      } catch (err) {
        if (!isBusy(err) || this.db.inTransaction || performance.now() >= deadline) throw err;
      }
      this.turn.give();
      await sleep(PAUSES_MS[Math.min(attempt, PAUSES_MS.length - 1)]);
      await this.turn.take();
    }
  }

  private run<R>({ sql, parameters }: CompiledQuery): QueryResult<R> {
    const statement = this.db.prepare(sql);
    if (statement.reader) return { rows: statement.all(parameters) as R[] };
    const { changes, lastInsertRowid } = statement.run(parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not used with SQLite');
  }
}

/** Kysely's SQLite driver with transactions that begin IMMEDIATE and statements that wait for the lock off the event loop. */
class WaitingDriver implements Driver {
  private readonly turn = new Turn();
  private readonly connection: WaitingConnection;

  constructor(private readonly db: SqliteWriter, waitMs: number) {
    this.connection = new WaitingConnection(db, this.turn, waitMs);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.turn.take();
    return this.connection;
  }

  // IMMEDIATE: the write lock is taken (and waited for) at BEGIN, where nothing is lost by trying
  // again; a deferred transaction would meet it at its first write, after reading.
  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(): Promise<void> {
    this.turn.give();
  }

  async destroy(): Promise<void> {
    this.db.close();
  }
}

/** A Kysely dialect over the writer connection: SQLite's compiler, adapter and introspector, the waiting driver. */
export function waitingSqliteDialect(db: SqliteWriter, waitMs = SQLITE_LOCK_WAIT_MS): Dialect {
  return {
    createDriver: () => new WaitingDriver(db, waitMs),
    createQueryCompiler: () => new SqliteQueryCompiler(),
    createAdapter: () => new SqliteAdapter(),
    createIntrospector: (kysely: Kysely<unknown>) => new SqliteIntrospector(kysely),
  };
}
