import { sql } from 'kysely';

/** Row values that come back differently per dialect, read one way. */
export function readJson<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

export function readBool(value: boolean | number | null): boolean {
  return value === true || value === 1;
}

/**
 * A timestamp parameter in raw SQL where PostgreSQL cannot infer its type (inside CASE): cast
 * there, left alone on SQLite (where timestamps are text and a CAST would mangle them).
 */
export function timestampParam(dialect: 'sqlite' | 'postgres', value: string) {
  return dialect === 'postgres' ? sql`${value}::timestamptz` : sql`${value}`;
}
