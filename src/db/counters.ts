import { sql } from 'kysely';
import type { Executor } from './schema.ts';

/**
 * Row counts kept beside the rows, changed in the same transaction as the insert or delete,
 * so a list's totalElements costs one primary-key read instead of a COUNT(*) scan.
 */
export async function bumpCounter(db: Executor, key: string, delta: number): Promise<void> {
  await db
    .insertInto('counters')
    .values({ key, value: delta })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: sql`counters.value + ${delta}` }))
    .execute();
}

export async function readCounter(db: Executor, key: string): Promise<number> {
  const row = await db.selectFrom('counters').select('value').where('key', '=', key).executeTakeFirst();
  return row ? Number(row.value) : 0;
}
