import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { AssistantTable } from './assistants.table.ts';
import { readJson } from '../../db/values.ts';
import type { Assistant } from './assistants.schemas.ts';
import { showExtension, showHook, type StoredExtension, type StoredHook } from './items.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/** Assistants and agents share one table and one shape; `kind` tells them apart. */
export type Kind = 'assistant' | 'agent';

export const assistantCounter = (kind: Kind, organizationId: string) => `assistants:${kind}:${organizationId}`;

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

export const etagOf = (row: { id: string; version: number }) => `"${row.id.slice(0, 8)}-${row.version}"`;
