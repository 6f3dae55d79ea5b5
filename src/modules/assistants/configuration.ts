import { isDeepStrictEqual } from 'node:util';
import type { Selectable } from 'kysely';
import type { SecretBox } from '../../crypto/secret-box.ts';
import { readJson } from '../../db/values.ts';
import { toAssistant } from './assistants.repository.ts';
import type { AssistantTable } from './assistants.table.ts';
import { originOf, type StoredExtension, type StoredHook } from './items.ts';

export type AssistantRow = Selectable<AssistantTable>;

/**
 * The columns of a row that are its identity or bookkeeping. Every other column is
 * configuration, so a column added to assistants later is versioned without a change here.
 */
const NOT_CONFIGURATION = new Set(['id', 'organization_id', 'kind', 'version', 'created_at', 'updated_at']);

/** The configuration columns of a row as stored (secrets sealed): what a version keeps. */
export function configurationOf(row: AssistantRow): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).filter(([column]) => !NOT_CONFIGURATION.has(column)));
}

/**
 * The configuration as columns take it on write. JSON columns read back parsed on PostgreSQL and
 * as text on SQLite; a version may hold either, and both are written as text.
 */
export function writableConfiguration(configuration: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(configuration).map(([column, value]) => [column, value !== null && typeof value === 'object' ? JSON.stringify(value) : value]));
}

/**
 * The row as it was at a version: that version's configuration over the current row (a column
 * the version predates keeps its current value), its number as the version and its time as
 * the last update.
 */
export function rowAt(row: AssistantRow, version: { number: number; configuration: unknown; created_at: string }): AssistantRow {
  return { ...row, ...readJson<Partial<AssistantRow>>(version.configuration), version: version.number, updated_at: version.created_at };
}

/**
 * An extension as "the same configuration" compares it: write-only values opened (a value sent
 * again is sealed anew, so sealed text differs) and without its id (items sent again without
 * ids are the same items). Only ever compared, never shown or logged.
 */
function revealExtension(item: StoredExtension, box: SecretBox) {
  const { id: _id, ...rest } = item;
  if (item.type !== 'tool_webhook') return rest;
  const parameters: Record<string, unknown> = { ...item.parameters };
  if (parameters.headers) {
    parameters.headers = Object.fromEntries(Object.entries(parameters.headers as Record<string, string>).map(([h, v]) => [h, box.open(v)]));
  }
  if (typeof parameters.signingSecret === 'string') parameters.signingSecret = box.open(parameters.signingSecret);
  return { ...rest, parameters };
}

/** The fields of the read shape, secrets opened and item ids left out; a hook's rotation state is not configuration. */
function comparable(row: AssistantRow, box: SecretBox): Record<string, unknown> {
  const { id: _id, createdAt: _created, updatedAt: _updated, ...fields } = toAssistant(row);
  return {
    ...fields,
    extensions: readJson<StoredExtension[]>(row.extensions).map((item) => revealExtension(item, box)),
    callEventHooks: readJson<StoredHook[]>(row.call_event_hooks).map((hook) => ({ type: hook.type, url: hook.url, secret: box.open(hook.secret) })),
  };
}

/** The fields of the read shape that differ between two rows, in the read shape's order: none means the same configuration. */
export function changedFields(before: AssistantRow, after: AssistantRow, box: SecretBox): string[] {
  const a = comparable(before, box);
  const b = comparable(after, box);
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((field) => !isDeepStrictEqual(a[field], b[field]));
}

/**
 * Hooks as a version had them, restored over the current ones, with the secrets they had. A
 * hook still there that changes secret towards the same server rotates as a PUT does (the
 * current secret keeps signing beside it for a while); one whose secret stays keeps its rotation.
 */
export function restoredHooks(current: readonly StoredHook[], restored: readonly StoredHook[], box: SecretBox, now: string): StoredHook[] {
  const byId = new Map(current.map((hook) => [hook.id, hook]));
  return restored.map((hook) => {
    const { previousSecret: _previous, rotatedAt: _rotated, ...plain } = hook;
    const live = byId.get(hook.id);
    if (!live || originOf(live.url) !== originOf(hook.url)) return plain;
    if (box.open(live.secret) !== box.open(hook.secret)) return { ...plain, previousSecret: live.secret, rotatedAt: now };
    return { ...plain, ...(live.previousSecret ? { previousSecret: live.previousSecret, rotatedAt: live.rotatedAt } : {}) };
  });
}
