import type { Kysely, Transaction } from 'kysely';
import type { Ajv } from 'ajv';
import type { Clock } from '../../clock.ts';
import type { SecretBox } from '../../crypto/secret-box.ts';
import type { Database, Executor } from '../../db/schema.ts';
import { readJson } from '../../db/values.ts';
import type { AllowList } from '../../egress/policy.ts';
import { AppError, badRequest, conflict, notFound, type ErrorDetail } from '../../http/errors.ts';
import type { Edit } from '../../http/updates.ts';
import { deleteAssistantRow, etagOf, findAssistant, insertAssistant, toAssistant, updateAssistantRow, type Kind } from './assistants.repository.ts';
import { tokenNameOf } from '../tokens/tokens.repository.ts';
import type { Assistant, AssistantCreate, AssistantUpdate } from './assistants.schemas.ts';
import { analysisProblems } from './after-call.schemas.ts';
import { changedFields, type AssistantRow } from './configuration.ts';
import { mergeExtensions, mergeHooks, type StoredExtension, type StoredHook } from './items.ts';
import { deleteVersions, insertVersion, pruneVersions, type VersionNote } from './versions.repository.ts';
import { MAX_VERSIONS } from './versions.schemas.ts';

/** Checks that a row the body references exists in the same organization (a strategy, a SIP number). */
export type ReferenceCheck = (db: Executor, organizationId: string, body: AssistantCreate) => Promise<ErrorDetail[]>;
/**
 * Runs inside the delete transaction: returns why the assistant or agent cannot be deleted
 * yet (an agent's unfinished tasks, a live call), or null after removing what goes with it.
 */
export type DeleteGuard = (db: Transaction<Database>, kind: Kind, id: string) => Promise<string | null>;
/** The version numbers of an assistant or agent that must be kept past MAX_VERSIONS (an agent's tasks pin them). */
export type VersionPins = (db: Executor, kind: Kind, id: string) => Promise<number[]>;
/** Who makes a change: an API token, or null for the platform admin. */
export type Author = { tokenId: string } | null;

export interface AssistantDeps {
  db: Kysely<Database>;
  box: SecretBox;
  allow: AllowList;
  clock: Clock;
  ajv: Ajv;
  /** The modules whose rows an assistant references; composed in app.ts. */
  referenceChecks: readonly ReferenceCheck[];
  /** The modules whose rows hang off an assistant; composed in app.ts. */
  deleteGuards: readonly DeleteGuard[];
  /** The modules that pin versions; composed in app.ts. */
  versionPins: readonly VersionPins[];
}

export async function referenceProblems(deps: AssistantDeps, db: Executor, organizationId: string, body: AssistantCreate): Promise<ErrorDetail[]> {
  return (await Promise.all(deps.referenceChecks.map((check) => check(db, organizationId, body)))).flat();
}

async function checkReferences(deps: AssistantDeps, db: Executor, organizationId: string, body: AssistantCreate) {
  const problems = [...analysisProblems(deps.ajv, body.analysis), ...(await referenceProblems(deps, db, organizationId, body))];
  if (problems.length) throw badRequest('Invalid references', problems);
}

/**
 * In the transaction of a change: the row as written becomes its version (numbered as the row
 * now is), and what falls out of the MAX_VERSIONS newest is dropped, unless pinned.
 */
export async function recordVersion(deps: AssistantDeps, trx: Executor, row: AssistantRow, note: Omit<VersionNote, 'token'>, author: Author) {
  const token = author ? { id: author.tokenId, name: (await tokenNameOf(trx, author.tokenId)) ?? '' } : null;
  const version = await insertVersion(trx, row, { ...note, token });
  if (row.version > MAX_VERSIONS) {
    const keep: number[] = [];
    for (const pins of deps.versionPins) keep.push(...(await pins(trx, row.kind as Kind, row.id)));
    await pruneVersions(trx, row.id, row.version, keep);
  }
  return version;
}

const mergeContext = (deps: AssistantDeps, at: string) => ({ box: deps.box, allow: deps.allow, ajv: deps.ajv, now: at });

export async function createAssistant(deps: AssistantDeps, kind: Kind, organizationId: string, body: AssistantCreate, author: Author) {
  const at = deps.clock.now().toISOString();
  const extensions = mergeExtensions([], body.extensions ?? [], mergeContext(deps, at));
  const hooks = mergeHooks([], body.callEventHooks ?? [], mergeContext(deps, at));
  const row = {
    id: crypto.randomUUID(),
    organization_id: organizationId,
    kind,
    name: body.name,
    system_prompt: body.systemPrompt ?? null,
    system_prompt_greeting: body.systemPromptGreeting ?? null,
    strategy_id: body.llmAudioContentGenerationStrategyId ?? null,
    telephone_number_id: body.telephoneNumberId ?? null,
    extensions: JSON.stringify(extensions),
    call_event_hooks: JSON.stringify(hooks),
    recording: body.recording ? JSON.stringify(body.recording) : null,
    analysis: body.analysis ? JSON.stringify(body.analysis) : null,
    version: 1,
    created_at: at,
    updated_at: at,
  };
  await deps.db.transaction().execute(async (trx) => {
    await checkReferences(deps, trx, organizationId, body);
    await insertAssistant(trx, row);
    await recordVersion(deps, trx, row, { changes: [], summary: 'created', restoredFrom: null, at }, author);
  });
  return row;
}

/** How often a versioned write is tried again after losing a race, before a 409. */
export const WRITE_ATTEMPTS = 3;

/**
 * PUT and PATCH. Optimistic concurrency: the write only lands on the version that was read. With
 * If-Match a changed version is a 412; without it the edit (a PATCH's merge too) is redone on the
 * fresh row, so two concurrent updates never silently lose each other's secrets-kept-by-mask.
 * An edit that leaves the configuration as it is (secrets compared as plain text, items without
 * their ids) writes nothing: no version, the same ETag and updatedAt.
 */
export async function updateAssistant(
  deps: AssistantDeps, kind: Kind, organizationId: string, id: string, edit: Edit<Assistant, AssistantUpdate>, ifMatch: string | undefined, author: Author,
) {
  for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
    const row = await findAssistant(deps.db, kind, organizationId, id);
    if (!row) throw notFound(kind === 'agent' ? 'Agent' : 'Assistant');
    if (ifMatch !== undefined && ifMatch !== '*' && !ifMatch.split(',').map((t) => t.trim()).includes(etagOf(row))) {
      throw new AppError(412, 'The resource changed since you read it (If-Match does not match the ETag)');
    }
    const body = edit(toAssistant(row));
    const at = deps.clock.now().toISOString();
    const extensions = mergeExtensions(readJson<StoredExtension[]>(row.extensions), body.extensions, mergeContext(deps, at));
    const hooks = mergeHooks(readJson<StoredHook[]>(row.call_event_hooks), body.callEventHooks, mergeContext(deps, at));
    const set = {
      name: body.name,
      system_prompt: body.systemPrompt,
      system_prompt_greeting: body.systemPromptGreeting,
      strategy_id: body.llmAudioContentGenerationStrategyId,
      // Optional in the interface: left out keeps the number, null removes it.
      ...(body.telephoneNumberId !== undefined ? { telephone_number_id: body.telephoneNumberId } : {}),
      extensions: JSON.stringify(extensions),
      call_event_hooks: JSON.stringify(hooks),
      // Optional like the number: left out keeps them, null turns them off.
      ...(body.recording !== undefined ? { recording: body.recording ? JSON.stringify(body.recording) : null } : {}),
      ...(body.analysis !== undefined ? { analysis: body.analysis ? JSON.stringify(body.analysis) : null } : {}),
      updated_at: at,
    };
    const next: AssistantRow = { ...row, ...set, version: row.version + 1 };
    const changes = changedFields(row, next, deps.box);
    if (!changes.length) return;
    const updated = await deps.db.transaction().execute(async (trx) => {
      await checkReferences(deps, trx, organizationId, body);
      if (!(await updateAssistantRow(trx, id, row.version, set))) return false;
      await recordVersion(deps, trx, next, { changes, summary: `${changes.join(', ')} changed`, restoredFrom: null, at }, author);
      return true;
    });
    if (updated) return;
    if (ifMatch !== undefined) throw new AppError(412, 'The resource changed while this update ran');
  }
  throw conflict('The resource is being changed by others; try again');
}

export async function deleteAssistant(deps: AssistantDeps, kind: Kind, organizationId: string, id: string) {
  await deps.db.transaction().execute(async (trx) => {
    if (!(await findAssistant(trx, kind, organizationId, id))) throw notFound(kind === 'agent' ? 'Agent' : 'Assistant');
    for (const guard of deps.deleteGuards) {
      const reason = await guard(trx, kind, id);
      if (reason) throw conflict(reason);
    }
    await deleteVersions(trx, id);
    await deleteAssistantRow(trx, kind, organizationId, id);
  });
}
