import type { ReferenceCheck } from '../assistants/assistants.service.ts';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { StrategyTable } from './strategies.table.ts';
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

/** An assistant's or agent's strategy must be one of its organization (a check composed in app.ts). */
export const strategyReferenceCheck: ReferenceCheck = async (db, organizationId, body) => {
  const id = body.llmAudioContentGenerationStrategyId;
  if (!id) return [];
  const found = await findStrategy(db, organizationId, id);
  return found ? [] : [{ path: 'llmAudioContentGenerationStrategyId', message: 'is not an LLM generation strategy of this organization' }];
};
