import type { Insertable, Selectable } from 'kysely';
import { bumpCounter, readCounter } from '../../db/counters.ts';
import type { Executor } from '../../db/schema.ts';
import { readJson } from '../../db/values.ts';
import { BASE_SORT, fetchPage, type PageQuery } from '../../http/pagination.ts';
import type { ReferenceCheck } from '../assistants/assistants.service.ts';
import type { StrategyTable } from './strategies.table.ts';
import type { Strategy } from './strategies.schemas.ts';

const counterOf = (organizationId: string) => `llm_strategies:${organizationId}`;
export const STRATEGY_SORT = { ...BASE_SORT, type: 'type' };

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
  return db.selectFrom('llm_strategies').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
}

export async function listStrategies(db: Executor, organizationId: string, query: PageQuery) {
  const select = db.selectFrom('llm_strategies').selectAll().where('organization_id', '=', organizationId);
  const page = await fetchPage(select, query, STRATEGY_SORT, () => readCounter(db, counterOf(organizationId)));
  return { ...page, items: page.items.map(toStrategy) };
}

export async function insertStrategy(db: Executor, row: Insertable<StrategyTable>): Promise<void> {
  await db.insertInto('llm_strategies').values(row).execute();
  await bumpCounter(db, counterOf(row.organization_id), 1);
}

export async function updateStrategyRow(db: Executor, organizationId: string, id: string, set: Pick<Insertable<StrategyTable>, 'name' | 'type' | 'parameters' | 'updated_at'>): Promise<void> {
  await db.updateTable('llm_strategies').set(set).where('organization_id', '=', organizationId).where('id', '=', id).execute();
}

export async function deleteStrategyRow(db: Executor, organizationId: string, id: string): Promise<void> {
  await db.deleteFrom('llm_strategies').where('organization_id', '=', organizationId).where('id', '=', id).execute();
  await bumpCounter(db, counterOf(organizationId), -1);
}

/** An assistant's or agent's strategy must be one of its organization (a check composed in app.ts). */
export const strategyReferenceCheck: ReferenceCheck = async (db, organizationId, body) => {
  const id = body.llmAudioContentGenerationStrategyId;
  if (!id) return [];
  const found = await findStrategy(db, organizationId, id);
  return found ? [] : [{ path: 'llmAudioContentGenerationStrategyId', message: 'is not an LLM generation strategy of this organization' }];
};
