import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../../db/database.ts';
import type { Database } from '../../db/schema.ts';

/** A half-open range [from, to) of ISO 8601 UTC timestamps, as the service writes them. */
export interface Range {
  from: string;
  to: string;
}

export interface OutcomeCount {
  day: string;
  outcome: string;
  n: number;
}

/** The UTC day (YYYY-MM-DD) of a timestamp column: SQLite keeps ISO text in UTC, PostgreSQL a timestamptz. */
function utcDay(dialect: Dialect, column: string) {
  return dialect === 'postgres'
    ? sql<string>`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD')`
    : sql<string>`substr(${sql.ref(column)}, 1, 10)`;
}

/**
 * Calls that ended in the range, by the UTC day they ended and their outcome: one range scan
 * of the (organization_id, created_at, outcome) index of conclusions (migration 010).
 */
export async function conclusionsPerDay(db: Kysely<Database>, dialect: Dialect, organizationId: string, range: Range): Promise<OutcomeCount[]> {
  const day = utcDay(dialect, 'created_at');
  const rows = await db
    .selectFrom('conclusions')
    .select([day.as('day'), 'outcome', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('organization_id', '=', organizationId)
    .where('created_at', '>=', range.from)
    .where('created_at', '<', range.to)
    .groupBy([day, 'outcome'])
    .execute();
  return rows.map((r) => ({ day: r.day, outcome: r.outcome, n: Number(r.n) }));
}

/**
 * Calls that ended in the range with a verdict of who answered them, by UTC day and verdict: one
 * range scan of the partial (organization_id, ended_at, answered_by) index of migration 017,
 * which holds only the calls a detection ran on.
 */
export async function answeredByPerDay(db: Kysely<Database>, dialect: Dialect, organizationId: string, range: Range): Promise<{ day: string; answeredBy: string; n: number }[]> {
  const day = utcDay(dialect, 'ended_at');
  const rows = await db
    .selectFrom('calls')
    .select([day.as('day'), 'answered_by', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('organization_id', '=', organizationId)
    .where('answered_by', 'is not', null)
    .where('ended_at', '>=', range.from)
    .where('ended_at', '<', range.to)
    .groupBy([day, 'answered_by'])
    .execute();
  return rows.map((r) => ({ day: r.day, answeredBy: r.answered_by ?? '', n: Number(r.n) }));
}

/**
 * Nearest-rank percentiles of the assistant's answer latency (`latency_ms`: from the end of the
 * user's turn; `response_ms`: a voice answer from the caller's last speech), in one statement on both
 * dialects: rank every answered turn of the range by latency (row_number) beside their count,
 * and keep the values at rank ceil(p·n), written (p·n + 99) / 100 in integer division because
 * SQLite has no ceil() without its math extension. The partial index of migration 010 holds
 * exactly these rows; `kind` is a literal so both planners can use it.
 */
export async function turnLatency(
  db: Kysely<Database>, organizationId: string, range: Range, column: 'latency_ms' | 'response_ms' = 'latency_ms',
): Promise<{ turns: number; p50: number | null; p95: number | null }> {
  const ranked = db
    .selectFrom('call_entries')
    .select((eb) => [
      eb.ref(column).as('ms'),
      eb.fn.agg<number>('row_number').over((o) => o.orderBy(column)).as('rn'),
      eb.fn.countAll<number>().over().as('n'),
    ])
    .where('organization_id', '=', organizationId)
    .where('kind', '=', sql.lit('assistant'))
    .where(column, 'is not', null)
    .where('at', '>=', range.from)
    .where('at', '<', range.to)
    .as('ranked');
  const row = await db
    .selectFrom(ranked)
    .select([
      (eb) => eb.fn.countAll<number | string>().as('turns'),
      sql<number | null>`max(case when rn = (n * 50 + 99) / 100 then ms end)`.as('p50'),
      sql<number | null>`max(case when rn = (n * 95 + 99) / 100 then ms end)`.as('p95'),
    ])
    .executeTakeFirstOrThrow();
  const ms = (value: number | null) => (value === null ? null : Number(value));
  return { turns: Number(row.turns), p50: ms(row.p50), p95: ms(row.p95) };
}

/** Tool webhook calls made in the range, and those that did not give the LLM a usable result (`detail.ok` false). */
export async function toolCalls(db: Kysely<Database>, dialect: Dialect, organizationId: string, range: Range): Promise<{ invocations: number; errors: number }> {
  const ok = dialect === 'postgres' ? sql<boolean>`(detail ->> 'ok') = 'true'` : sql<boolean>`json_extract(detail, '$.ok') = 1`;
  const row = await db
    .selectFrom('call_entries')
    .select([
      (eb) => eb.fn.countAll<number | string>().as('invocations'),
      sql<number | string | null>`sum(case when ${ok} then 0 else 1 end)`.as('errors'),
    ])
    .where('organization_id', '=', organizationId)
    .where('kind', '=', sql.lit('tool'))
    .where('at', '>=', range.from)
    .where('at', '<', range.to)
    .executeTakeFirstOrThrow();
  return { invocations: Number(row.invocations), errors: Number(row.errors ?? 0) };
}

/**
 * Speech over the assistant in the range: the real interruptions (answers the caller cut, one
 * entry each) and the false ones (counted per call, of calls that ended in the range).
 */
export async function interruptions(db: Kysely<Database>, organizationId: string, range: Range): Promise<{ real: number; false: number }> {
  const real = await db.selectFrom('call_entries')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('organization_id', '=', organizationId)
    .where('kind', '=', sql.lit('assistant'))
    .where(sql<boolean>`${sql.ref('interrupted')} = ${sql.lit(true)}`)
    .where('at', '>=', range.from)
    .where('at', '<', range.to)
    .executeTakeFirstOrThrow();
  // Calls that ended in the range are those whose conclusion was made in it (012's index).
  const falseOnes = await db.selectFrom('conclusions')
    .innerJoin('calls', 'calls.id', 'conclusions.call_id')
    .select((eb) => eb.fn.sum<number | string | null>('calls.false_interruptions').as('n'))
    .where('conclusions.organization_id', '=', organizationId)
    .where('conclusions.created_at', '>=', range.from)
    .where('conclusions.created_at', '<', range.to)
    .executeTakeFirstOrThrow();
  return { real: Number(real.n), false: Number(falseOnes.n ?? 0) };
}

