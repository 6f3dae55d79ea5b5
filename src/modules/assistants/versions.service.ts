import type { Updateable } from 'kysely';
import { readJson } from '../../db/values.ts';
import { conflict, notFound } from '../../http/errors.ts';
import { findAssistant, updateAssistantRow, type Kind } from './assistants.repository.ts';
import type { AssistantTable } from './assistants.table.ts';
import { recordVersion, referenceProblems, WRITE_ATTEMPTS, type AssistantDeps, type Author } from './assistants.service.ts';
import { changedFields, configurationOf, restoredHooks, rowAt, writableConfiguration, type AssistantRow } from './configuration.ts';
import type { StoredExtension, StoredHook } from './items.ts';
import { urlProblems } from './tool-webhook.ts';
import { findVersion, toVersion } from './versions.repository.ts';
import type { AssistantVersion } from './versions.schemas.ts';

/** URLs of the version the egress policy refuses now (it may have changed since): judged as a write judges them. */
function destinationProblems(row: AssistantRow, deps: AssistantDeps) {
  const tools = readJson<StoredExtension[]>(row.extensions).flatMap((item, i) =>
    (item.type === 'tool_webhook' ? urlProblems(item.parameters.serverUrl, `extensions[${i}].parameters.serverUrl`, deps.allow) : []));
  const hooks = readJson<StoredHook[]>(row.call_event_hooks).flatMap((hook, i) => urlProblems(hook.url, `callEventHooks[${i}].parameters.url`, deps.allow));
  return [...tools, ...hooks];
}

export interface Restored {
  /** false: the assistant already had that configuration, and no version was made. */
  made: boolean;
  /** The version the assistant now is. */
  version: AssistantVersion;
}

/**
 * Brings a version back as a new version: its whole configuration, secrets as they were then
 * (sealed values are kept in the version). What it references must still exist (409 naming the
 * field otherwise). Restoring the configuration the assistant already has makes no version, so
 * a retried restore makes one at most. Races are handled as an update's (see updateAssistant).
 */
export async function restoreVersion(deps: AssistantDeps, kind: Kind, organizationId: string, id: string, number: number, author: Author): Promise<Restored> {
  for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
    const row = await findAssistant(deps.db, kind, organizationId, id);
    if (!row) throw notFound(kind === 'agent' ? 'Agent' : 'Assistant');
    const version = await findVersion(deps.db, organizationId, id, number);
    if (!version) throw notFound(`Version ${number} of this ${kind}`);
    const at = deps.clock.now().toISOString();
    const target = rowAt(row, version);
    const hooks = restoredHooks(readJson<StoredHook[]>(row.call_event_hooks), readJson<StoredHook[]>(target.call_event_hooks), deps.box, at);
    const set = { ...writableConfiguration(configurationOf(target)), call_event_hooks: JSON.stringify(hooks), updated_at: at } as Omit<Updateable<AssistantTable>, 'version'>;
    const next: AssistantRow = { ...row, ...set, version: row.version + 1 };
    const changes = changedFields(row, next, deps.box);
    if (!changes.length) {
      const current = await findVersion(deps.db, organizationId, id, row.version);
      return { made: false, version: toVersion(row, current ?? version) };
    }
    const made = await deps.db.transaction().execute(async (trx) => {
      const references = { name: next.name, llmAudioContentGenerationStrategyId: next.strategy_id, telephoneNumberId: next.telephone_number_id };
      const problems = [...await referenceProblems(deps, trx, organizationId, references), ...destinationProblems(next, deps)];
      if (problems.length) {
        throw conflict(`Version ${number} cannot be restored: what it names no longer exists or is no longer allowed`, problems.map((p) => ({ ...p, path: `configuration.${p.path}` })));
      }
      if (!(await updateAssistantRow(trx, id, row.version, set))) return null;
      return recordVersion(deps, trx, next, { changes, summary: `restored version ${number}: ${changes.join(', ')} changed`, restoredFrom: number, at }, author);
    });
    if (made) return { made: true, version: toVersion(next, made) };
  }
  throw conflict('The resource is being changed by others; try again');
}
