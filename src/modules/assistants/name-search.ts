import { sql, type SelectQueryBuilder } from 'kysely';
import { Type } from 'typebox';
import type { Database } from '../../db/schema.ts';

// No NUL: PostgreSQL text cannot hold one (the query would fail), and no stored name has one.
export const NameQuery = Type.Optional(Type.String({
  minLength: 1, maxLength: 200, pattern: '^[^\\u0000]+$',
  description: 'Only names that start with this text, ignoring ASCII case (index-backed prefix search)',
}));

/** Above every character, so `prefix || TOP` is past every string that starts with prefix in a binary or C collation. */
const TOP = String.fromCodePoint(0x10ffff);

type AssistantQuery<O> = SelectQueryBuilder<Database, 'assistants', O>;

/**
 * A name prefix filter that walks the `(organization_id, kind, lower(name), id)` index
 * (migration 009): the range bounds use the index on both SQLite and PostgreSQL, and the exact
 * `substr` check keeps the answer right under any collation. The database lower-cases both
 * sides, so they always agree (SQLite folds ASCII only; PostgreSQL follows its locale).
 */
export function whereNameStartsWith<O>(query: AssistantQuery<O>, q: string): AssistantQuery<O> {
  const prefix = sql<string>`lower(cast(${q} as text))`;
  return query
    .where(sql<string>`lower(name)`, '>=', prefix)
    .where(sql<string>`lower(name)`, '<', sql<string>`lower(cast(${q} as text)) || ${TOP}`)
    .where(sql<string>`substr(lower(name), 1, length(${prefix}))`, '=', prefix);
}

/** The total of a filtered list: a count over the matching index range (the kept counters hold only unfiltered totals). */
export async function countNameMatches(query: AssistantQuery<unknown>): Promise<number> {
  const row = await query.clearSelect().select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirst();
  return Number(row?.n ?? 0);
}
