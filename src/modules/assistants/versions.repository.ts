import type { Selectable } from 'kysely';
import type { Executor } from '../../db/schema.ts';
import { readJson } from '../../db/values.ts';
import { fetchPage, type PageQuery } from '../../http/pagination.ts';
import { findAssistant, toAssistant, type Kind } from './assistants.repository.ts';
import { configurationOf, rowAt, type AssistantRow } from './configuration.ts';
import { MAX_VERSIONS, type AssistantVersion, type AssistantVersionSummary } from './versions.schemas.ts';
import type { AssistantVersionTable } from './versions.table.ts';

type VersionRow = Selectable<AssistantVersionTable>;

export const VERSION_SORT = { number: 'number', createdAt: 'created_at' };

export interface VersionNote {
  changes: readonly string[];
  summary: string;
  restoredFrom: number | null;
  /** The API token that made it, or null for the platform admin. */
  token: { id: string; name: string } | null;
  at: string;
}

export function toVersionSummary(row: VersionRow): AssistantVersionSummary {
  return {
    number: row.number,
    createdAt: row.created_at,
    token: row.token_id ? { id: row.token_id, name: row.token_name ?? '' } : null,
    summary: row.summary,
    changes: readJson<string[]>(row.changes),
    restoredFrom: row.restored_from,
  };
}

export function toVersion(assistant: AssistantRow, row: VersionRow): AssistantVersion {
  return { ...toVersionSummary(row), configuration: toAssistant(rowAt(assistant, row)) };
}

/** The version a row now is (its `version`), with the whole configuration it holds; answers the version row. */
export async function insertVersion(db: Executor, row: AssistantRow, note: VersionNote): Promise<VersionRow> {
  const version = {
    assistant_id: row.id,
    number: row.version,
    organization_id: row.organization_id,
    kind: row.kind,
    configuration: JSON.stringify(configurationOf(row)),
    changes: JSON.stringify(note.changes),
    summary: note.summary,
    restored_from: note.restoredFrom,
    token_id: note.token?.id ?? null,
    token_name: note.token?.name ?? null,
    created_at: note.at,
  };
  await db.insertInto('assistant_versions').values(version).execute();
  return version;
}

/** Drops what falls out of the MAX_VERSIONS newest, but never a version that `keep` names (pinned by tasks). */
export async function pruneVersions(db: Executor, assistantId: string, latest: number, keep: readonly number[]): Promise<void> {
  if (latest <= MAX_VERSIONS) return;
  let query = db.deleteFrom('assistant_versions').where('assistant_id', '=', assistantId).where('number', '<=', latest - MAX_VERSIONS);
  if (keep.length) query = query.where('number', 'not in', [...keep]);
  await query.execute();
}

export async function deleteVersions(db: Executor, assistantId: string): Promise<void> {
  await db.deleteFrom('assistant_versions').where('assistant_id', '=', assistantId).execute();
}

export function findVersion(db: Executor, organizationId: string, assistantId: string, number: number) {
  return db.selectFrom('assistant_versions').selectAll()
    .where('organization_id', '=', organizationId).where('assistant_id', '=', assistantId).where('number', '=', number)
    .executeTakeFirst();
}

/** Which of these version numbers an assistant has. */
export async function existingVersions(db: Executor, assistantId: string, numbers: readonly number[]): Promise<Set<number>> {
  if (!numbers.length) return new Set();
  const rows = await db.selectFrom('assistant_versions').select('number').where('assistant_id', '=', assistantId).where('number', 'in', [...numbers]).execute();
  return new Set(rows.map((r) => r.number));
}

/** A page of an assistant's versions. At most MAX_VERSIONS (and the pinned ones) exist: counting them is one short index range. */
export async function listVersions(db: Executor, organizationId: string, assistantId: string, query: PageQuery) {
  const select = db.selectFrom('assistant_versions').selectAll().where('organization_id', '=', organizationId).where('assistant_id', '=', assistantId);
  const count = () => select.clearSelect().select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow().then((r) => Number(r.n));
  const page = await fetchPage(select, query, VERSION_SORT, count, { tiebreak: 'number' });
  return { ...page, items: page.items.map(toVersionSummary) };
}

/**
 * The row an assistant or agent had at a version, in the shape of its current row; the current
 * row itself for null or the current number (no second read). Undefined when the assistant, or
 * that version of it, does not exist.
 */
export async function findAssistantAt(db: Executor, kind: Kind, organizationId: string, id: string, version: number | null): Promise<AssistantRow | undefined> {
  const row = await findAssistant(db, kind, organizationId, id);
  if (!row || version === null || version === row.version) return row;
  const kept = await findVersion(db, organizationId, id, version);
  return kept ? rowAt(row, kept) : undefined;
}
