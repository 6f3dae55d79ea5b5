import { sql, type Transaction } from 'kysely';
import type { Db } from './database.ts';
import type { Database } from './schema.ts';

/**
 * Runs `work` in a transaction that holds a lock named by `key` across every process: a
 * transaction-level advisory lock on PostgreSQL, SQLite's write lock taken at BEGIN IMMEDIATE
 * on SQLite. For claims that must see a consistent count across processes (a SIP trunk's
 * concurrent-call cap).
 *
 * With `busy: 'skip'` a process that finds the lock held (PostgreSQL) does not queue behind it
 * and answers `busy` instead: the holder is claiming what is due right now, so waiting only
 * to find less would stack every poller's claim end to end.
 */
export async function withClaimLock<T>(db: Db, key: number, work: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
export async function withClaimLock<T, B>(db: Db, key: number, work: (trx: Transaction<Database>) => Promise<T>, options: { busy: 'skip'; whenBusy: B }): Promise<T | B>;
export async function withClaimLock<T, B>(
  db: Db, key: number, work: (trx: Transaction<Database>) => Promise<T>, options?: { busy: 'skip'; whenBusy: B },
): Promise<T | B> {
  if (db.dialect === 'postgres') {
    return db.kysely.transaction().execute(async (trx) => {
      if (options) {
        const { rows } = await sql<{ got: boolean }>`select pg_try_advisory_xact_lock(${key}) as got`.execute(trx);
        if (!rows[0]?.got) return options.whenBusy;
      } else {
        await sql`select pg_advisory_xact_lock(${key})`.execute(trx);
      }
      return work(trx);
    });
  }
  return db.kysely.connection().execute(async (conn) => {
    await sql`begin immediate`.execute(conn);
    try {
      const result = await work(conn as Transaction<Database>);
      await sql`commit`.execute(conn);
      return result;
    } catch (error) {
      await sql`rollback`.execute(conn);
      throw error;
    }
  });
}

/**
 * Inside a transaction: a lock on a name (an organization's call count, say) held until the
 * transaction ends, across processes on PostgreSQL. SQLite runs one writer at a time already.
 */
export async function lockFor(trx: Transaction<Database>, dialect: Db['dialect'], name: string): Promise<void> {
  if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(hashtext(${name}))`.execute(trx);
}
