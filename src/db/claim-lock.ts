import { sql, type Transaction } from 'kysely';
import type { Db } from './database.ts';
import type { Database } from './schema.ts';

/**
 * Runs `work` in a transaction that holds a lock named by `key` across every process: a
 * transaction-level advisory lock on PostgreSQL, SQLite's write lock taken at BEGIN IMMEDIATE
 * on SQLite. For claims that must see a consistent count across processes (a SIP trunk's
 * concurrent-call cap).
 */
export async function withClaimLock<T>(db: Db, key: number, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  if (db.dialect === 'postgres') {
    return db.kysely.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(${key})`.execute(trx);
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
