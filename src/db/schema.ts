import type { ColumnType, Kysely, Transaction } from 'kysely';

/** Timestamps travel as ISO 8601 strings on both dialects (see db/database.ts). */
export type Timestamp = string;
/** JSON is written as a string; PostgreSQL (jsonb) reads back parsed, SQLite (text) as a string. */
export type Json = ColumnType<unknown, string, string>;
/** Booleans are written as 0/1, which both a PostgreSQL boolean and a SQLite integer accept. */
export type Bool = ColumnType<boolean | number, number, number>;

export interface SettingTable {
  key: string;
  value: string;
}

export interface CounterTable {
  key: string;
  value: ColumnType<number, number, number>;
}

export interface IdempotencyKeyTable {
  scope: string;
  key: string;
  request_hash: string;
  status_code: number | null;
  response_body: string | null;
  location: string | null;
  created_at: Timestamp;
}

export interface RateLimitWindowTable {
  key: string;
  window_start: ColumnType<number, number, number>;
  used: number;
}

/**
 * The tables of the platform itself. Each feature module adds its own tables to this interface
 * in its `*.table.ts` (declaration merging, as Fastify's decorators do), so this file never
 * imports a feature.
 */
export interface Database {
  settings: SettingTable;
  counters: CounterTable;
  idempotency_keys: IdempotencyKeyTable;
  rate_limit_windows: RateLimitWindowTable;
}

/** What repository functions take: the database, or a transaction the service opened. */
export type Executor = Kysely<Database> | Transaction<Database>;
