import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database, StrategyTable } from '../../db/schema.ts';
import { readJson } from '../../db/values.ts';
import type { Strategy } from './strategies.schemas.ts';

type Executor = Kysely<Database> | Transaction<Database>;

export const strategyCounter = (organizationId: string) => `llm_strategies:${organizationId}`;

export function toStrategy(row: Selectable<StrategyTable>): Strategy {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    type: row.type,
    parameters: readJson<Strategy['parameters']>(row.parameters),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function findStrategy(db: Executor, organizationId: string, id: string) {
  return db
    .selectFrom('llm_strategies')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .executeTakeFirst();
}
