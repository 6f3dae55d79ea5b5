import type { CreateTableBuilder } from 'kysely';
import type { Dialect } from './database.ts';

/** Column types that differ by dialect, so one migration serves both. */
export function types(dialect: Dialect) {
  const pg = dialect === 'postgres';
  return {
    id: pg ? 'uuid' : 'text',
    timestamp: pg ? 'timestamptz' : 'text',
    json: pg ? 'jsonb' : 'text',
    bool: pg ? 'boolean' : 'integer',
  } as const;
}

/** id, created_at and updated_at, which every resource table carries. */
export function withResourceColumns<T extends string>(
  table: CreateTableBuilder<T, never>,
  dialect: Dialect,
): CreateTableBuilder<T, 'id' | 'created_at' | 'updated_at'> {
  const t = types(dialect);
  return table
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull());
}
