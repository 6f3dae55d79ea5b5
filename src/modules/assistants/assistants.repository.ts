import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../../db/database.ts';
import { prepared } from '../../db/prepared.ts';
import { bumpCounter, readCounter } from '../../db/counters.ts';
import type { Executor } from '../../db/schema.ts';
import { readJson } from '../../db/values.ts';
import { BASE_SORT, fetchPage, type PageQuery } from '../../http/pagination.ts';
import type { AnalysisSetting, RecordingSetting } from './after-call.schemas.ts';
import type { AssistantTable } from './assistants.table.ts';
import type { Assistant } from './assistants.schemas.ts';
import { showExtension, showHook, type StoredExtension, type StoredHook } from './items.ts';
import { countNameMatches, whereNameStartsWith } from './name-search.ts';

/** Assistants and agents share one table and one shape; `kind` tells them apart. */
export type Kind = 'assistant' | 'agent';

const counterOf = (kind: Kind, organizationId: string) => `assistants:${kind}:${organizationId}`;

export function toAssistant(row: Selectable<AssistantTable>): Assistant {
  return {
    id: row.id,
    name: row.name,
    systemPrompt: row.system_prompt,
    systemPromptGreeting: row.system_prompt_greeting,
    llmAudioContentGenerationStrategyId: row.strategy_id,
    telephoneNumberId: row.telephone_number_id,
    extensions: readJson<StoredExtension[]>(row.extensions).map(showExtension),
    callEventHooks: readJson<StoredHook[]>(row.call_event_hooks).map(showHook),
    recording: row.recording ? readJson<RecordingSetting>(row.recording) : { enabled: false },
    analysis: row.analysis ? readJson<AnalysisSetting>(row.analysis) : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function findAssistant(db: Executor, kind: Kind, organizationId: string, id: string) {
  return db
    .selectFrom('assistants')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('kind', '=', kind)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The hottest read, compiled once per kind (see db/prepared.ts). */
export function preparedFind(db: Db, kind: Kind) {
  return prepared(db, (organizationId: string, id: string) =>
    db.kysely.selectFrom('assistants').selectAll().where('organization_id', '=', organizationId).where('kind', '=', kind).where('id', '=', id));
}

/** Writes the next version over the one that was read; false when another write got there first. */
export async function updateAssistantRow(db: Executor, id: string, version: number, set: Omit<Updateable<AssistantTable>, 'version'>): Promise<boolean> {
  const result = await db.updateTable('assistants').set({ ...set, version: version + 1 }).where('id', '=', id).where('version', '=', version).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** A page of assistants or agents; `q` keeps those whose name starts with it (counted over the index range, not the kept counter). */
export async function listAssistants(db: Executor, kind: Kind, organizationId: string, query: PageQuery, q?: string) {
  let scoped = db.selectFrom('assistants').where('organization_id', '=', organizationId).where('kind', '=', kind);
  if (q) scoped = whereNameStartsWith(scoped, q);
  const total = q ? () => countNameMatches(scoped) : () => readCounter(db, counterOf(kind, organizationId));
  const page = await fetchPage(scoped.selectAll(), query, BASE_SORT, total);
  return { ...page, items: page.items.map(toAssistant) };
}

export async function insertAssistant(db: Executor, row: Insertable<AssistantTable> & { kind: Kind }): Promise<void> {
  await db.insertInto('assistants').values(row).execute();
  await bumpCounter(db, counterOf(row.kind, row.organization_id), 1);
}

export async function deleteAssistantRow(db: Executor, kind: Kind, organizationId: string, id: string): Promise<void> {
  await db.deleteFrom('assistants').where('organization_id', '=', organizationId).where('kind', '=', kind).where('id', '=', id).execute();
  await bumpCounter(db, counterOf(kind, organizationId), -1);
}

/** An assistant or agent that uses a strategy or a SIP number (which then cannot be deleted), if any. */
export function firstUserOf(db: Executor, column: 'strategy_id' | 'telephone_number_id', id: string) {
  return db.selectFrom('assistants').select(['kind', 'name']).where(column, '=', id).executeTakeFirst();
}

/** The call event hooks of an assistant or agent as stored (sealed secrets), or none when it is gone. */
export async function hooksOf(db: Executor, organizationId: string, id: string): Promise<StoredHook[]> {
  const row = await db.selectFrom('assistants').select('call_event_hooks').where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  return row ? readJson<StoredHook[]>(row.call_event_hooks) : [];
}

export const etagOf = (row: { id: string; version: number }) => `"${row.id.slice(0, 8)}-${row.version}"`;
