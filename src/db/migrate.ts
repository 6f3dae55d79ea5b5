import { sql, type Kysely, type Transaction } from 'kysely';
import type { Db, Dialect } from './database.ts';

// Migrations run against the schema as it was when they were written, not today's types.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = any;
import { migrations } from './migrations/index.ts';

export interface Migration {
  readonly name: string;
  up(db: Transaction<AnyDb>, dialect: Dialect): Promise<void>;
}

// Any constant works; it only has to be the same for every Parley process on one database.
const PG_MIGRATION_LOCK = 0x7061726c;

async function pendingAndApply(trx: Transaction<AnyDb>, dialect: Dialect): Promise<string[]> {
  await trx.schema
    .createTable('parley_migrations')
    .ifNotExists()
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('applied_at', 'text', (c) => c.notNull())
    .execute();
  const rows = await trx.selectFrom('parley_migrations').select('name').execute();
  const applied = new Set(rows.map((r: { name: string }) => r.name));
  const done: string[] = [];
  for (const migration of migrations) {
    if (applied.has(migration.name)) continue;
    await migration.up(trx, dialect);
    await trx
      .insertInto('parley_migrations')
      // The wall clock on purpose: this records when the schema changed, outside any injected time.
      .values({ name: migration.name, applied_at: new Date().toISOString() })
      .execute();
    done.push(migration.name);
  }
  return done;
}

/**
 * Applies pending migrations in one transaction, holding a lock for its whole length, so
 * that two processes starting at once apply each migration exactly once: the second waits,
 * then finds nothing left to do. Both dialects have transactional DDL.
 */
export async function migrate(db: Db): Promise<string[]> {
  const kysely = db.kysely as unknown as Kysely<AnyDb>;
  if (db.dialect === 'postgres') {
    return kysely.transaction().execute(async (trx) => {
      // A migration may rewrite a big table: no statement timeout inside it, and no lock wait for ever either.
      await sql`set local statement_timeout = 0`.execute(trx);
      await sql`select pg_advisory_xact_lock(${PG_MIGRATION_LOCK})`.execute(trx);
      return pendingAndApply(trx, 'postgres');
    });
  }
  // BEGIN IMMEDIATE takes SQLite's write lock up front; a second process waits for it (sqlite-writer.ts, up to 5 s).
  return kysely.connection().execute(async (conn) => {
    await sql`begin immediate`.execute(conn);
    try {
      const done = await pendingAndApply(conn as Transaction<AnyDb>, 'sqlite');
      await sql`commit`.execute(conn);
      return done;
    } catch (error) {
      await sql`rollback`.execute(conn);
      throw error;
    }
  });
}

export interface MigrationState {
  applied: string[];
  /** Known to this version, not applied yet (the next start, or `parley migrate`, applies them). */
  pending: string[];
  /** Applied, but unknown to this version: a newer Parley migrated the database. */
  unknown: string[];
}

/** What `parley doctor` reports: read only, nothing is created or applied. */
export async function migrationState(db: Db): Promise<MigrationState> {
  const kysely = db.kysely as unknown as Kysely<AnyDb>;
  const tables = await kysely.introspection.getTables();
  const rows: { name: string }[] = tables.some((t) => t.name === 'parley_migrations')
    ? await kysely.selectFrom('parley_migrations').select('name').execute()
    : [];
  const applied = rows.map((r) => r.name);
  const known = new Set(migrations.map((m) => m.name));
  return {
    applied,
    pending: migrations.map((m) => m.name).filter((name) => !applied.includes(name)),
    unknown: applied.filter((name) => !known.has(name)),
  };
}
