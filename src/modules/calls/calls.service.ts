import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Selectable, Transaction } from 'kysely';
import type { CallEnd, CallRecorder } from '../../calls/record.ts';
import type { NewCall } from '../../calls/store.ts';
import { fillPlaceholders, TemplateTooLongError } from '../../calls/template.ts';
import type { TransportInfo } from '../../calls/transports/transport.ts';
import type { Context } from '../../context.ts';
import { lockFor } from '../../db/claim-lock.ts';
import type { Database } from '../../db/schema.ts';
import { readJson } from '../../db/values.ts';
import { badRequest, conflict, notFound, type AppError } from '../../http/errors.ts';
import { findAssistant } from '../assistants/assistants.repository.ts';
import { LIMITS } from '../assistants/assistants.schemas.ts';
import { findAssistantAt } from '../assistants/versions.repository.ts';
import { pinnedAgentVersion } from '../tasks/tasks.repository.ts';
import { enqueueEvent } from '../events/outbox.ts';
import { scheduleAnalysis } from '../analysis/analysis.schedule.ts';
import { appendEntries, countNewCall, countStatusChange, loadLog, refOf } from './calls.repository.ts';
import type { CallStatus } from './calls.schemas.ts';
import type { CallTable } from './calls.table.ts';

/** How long the single-use token in a websocketUrl works. */
export const TOKEN_TTL_MS = 60_000;
/** A call's userValues, as JSON. */
export const MAX_USER_VALUES_BYTES = 16 * 1024;

export interface CallDeps {
  ctx: Context;
  /** The lease owner of the calls this process holds. */
  owner: string;
}

const hashToken = (token: string) => createHash('sha256').update(token).digest();


/** The prompt and greeting as this call will fill them: refused (400) when a value would blow them past their limits. */
function checkExpansion(row: { system_prompt: string | null; system_prompt_greeting: string | null }, values: Record<string, unknown>): void {
  const fields = [['systemPrompt', row.system_prompt, LIMITS.systemPrompt], ['systemPromptGreeting', row.system_prompt_greeting, LIMITS.greeting]] as const;
  for (const [field, text, limit] of fields) {
    try {
      if (text) fillPlaceholders(text, values, limit);
    } catch (err) {
      if (!(err instanceof TemplateTooLongError)) throw err;
      throw badRequest('userValues make the prompt too long', [{ path: 'userValues', message: `fill ${field} past its limit of ${limit} characters` }]);
    }
  }
}

/**
 * A `ringing` call and its connect token; only the token's hash is stored. At most
 * PARLEY_MAX_CALLS_PER_ORGANIZATION calls of one organization ring or run at once (counted under
 * a per-organization lock, so concurrent starts cannot pass it).
 */
export async function createCall(deps: CallDeps, call: NewCall): Promise<{ id: string; token: string; expiresAt: string }> {
  const now = deps.ctx.clock.now();
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + TOKEN_TTL_MS).toISOString();
  const id = await deps.ctx.db.kysely.transaction().execute((trx) =>
    insertCall(trx, deps, call, now, { status: 'ringing', token_hash: hashToken(token).toString('hex'), token_expires_at: expiresAt, started_at: null }));
  return { id, token, expiresAt };
}

/**
 * A call that is connected as it is created (a SIP call, once answered): `active` at once, with
 * no token, held by this process, its call_started event queued. Runs in the caller's
 * transaction, which may hold a lock of its own (the credential's load for incoming calls).
 * Throws the 404 and 409 of createCall when the assistant is gone or the organization is at its cap.
 */
export async function insertLiveCall(trx: Transaction<Database>, deps: CallDeps, call: NewCall): Promise<Selectable<CallTable>> {
  const now = deps.ctx.clock.now();
  const id = await insertCall(trx, deps, call, now, { status: 'active', token_hash: null, token_expires_at: null, started_at: now.toISOString() });
  const row = await trx.selectFrom('calls').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  await enqueueCallStarted(trx, row, now);
  return row;
}

/** Why a call has no assistant to run: none (404), a version it was asked for that it lacks (400 naming version), a task's pin gone (404). */
async function missingSource(trx: Transaction<Database>, call: NewCall, pinned: number | null): Promise<AppError> {
  const name = call.kind === 'agent' ? 'Agent' : 'Assistant';
  if (pinned === null) return notFound(name);
  if (call.taskId) return notFound(`Version ${pinned} of the agent (pinned by the task)`);
  if (!(await findAssistant(trx, call.kind, call.organizationId, call.sourceId))) return notFound(name);
  return badRequest('No such version', [{ path: 'version', message: `the ${call.kind} has no version ${pinned} (GET …/versions lists those kept)` }]);
}

type Opening = Pick<CallTable, 'token_hash' | 'token_expires_at' | 'started_at'> & { status: CallStatus };

/**
 * The checks and the insert every new call goes through: its assistant exists (at the version a
 * task pins, else as it is now: the call keeps that version), its values fit, its organization
 * is under the cap.
 */
async function insertCall(trx: Transaction<Database>, deps: CallDeps, call: NewCall, now: Date, opening: Opening): Promise<string> {
  const { ctx } = deps;
  if (Buffer.byteLength(JSON.stringify(call.userValues)) > MAX_USER_VALUES_BYTES) {
    throw badRequest('userValues is too large', [{ path: 'userValues', message: `must be at most ${MAX_USER_VALUES_BYTES} bytes as JSON` }]);
  }
  const at = now.toISOString();
  const id = crypto.randomUUID();
  await lockFor(trx, ctx.db.dialect, `calls:${call.organizationId}`);
  const pinned = call.taskId ? await pinnedAgentVersion(trx, call.taskId) : (call.version ?? null);
  const source = await findAssistantAt(trx, call.kind, call.organizationId, call.sourceId, pinned);
  if (!source) throw await missingSource(trx, call, pinned);
  checkExpansion(source, call.userValues);
  const live = await trx.selectFrom('calls').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('organization_id', '=', call.organizationId).where('status', 'in', ['ringing', 'active']).executeTakeFirstOrThrow();
  const cap = ctx.config.maxCallsPerOrganization;
  if (Number(live.n) >= cap) {
    throw conflict(`The organization already has ${cap} calls ringing or in progress, its limit (PARLEY_MAX_CALLS_PER_ORGANIZATION); end one first`);
  }
  await trx.insertInto('calls').values({
    id, organization_id: call.organizationId, assistant_id: call.sourceId, kind: call.kind,
    transport: JSON.stringify(call.transport), user_values: JSON.stringify(call.userValues), trace_id: call.traceId,
    ended_at: null, end_reason: null, transcript: '[]', tool_invocations: '[]', conclusion_id: null, ...opening,
    lease_owner: deps.owner, lease_expires_at: new Date(now.getTime() + ctx.config.callLeaseMs).toISOString(),
    failure: null, task_id: call.taskId ?? null, unfilled_placeholders: null, audio: call.audio ? JSON.stringify(call.audio) : null, providers: null,
    sip_credential_id: call.sipCredentialId ?? null, media: null, assistant_version: source.version,
    created_at: at, updated_at: at,
  }).execute();
  await countNewCall(trx, { organizationId: call.organizationId, kind: call.kind, sourceId: call.sourceId }, opening.status);
  return id;
}

/**
 * A call whose client answered its tools (a test with mocks) sends no call event hooks: its
 * transcript holds tool results that no tool server gave, which a receiver (a CRM) must not take
 * for a real call's.
 */
function sendsEvents(row: Pick<Selectable<CallTable>, 'transport'>): boolean {
  const transport = readJson<TransportInfo>(row.transport);
  return !(transport.type === 'websocket' && transport.clientTools);
}

/** call_started goes out when a call connects: its WebSocket with the token, a SIP call once answered. */
async function enqueueCallStarted(trx: Transaction<Database>, row: Selectable<CallTable>, now: Date): Promise<void> {
  if (!sendsEvents(row)) return;
  const ref = refOf(row);
  await enqueueEvent(trx, {
    organizationId: ref.organizationId, sourceKind: ref.kind, sourceId: ref.sourceId, type: 'call_started',
    payload: { callId: row.id, transport: readJson<TransportInfo>(row.transport), startedAt: row.started_at },
  }, now);
}

/**
 * Uses the token. A wrong, used or expired token costs one read and no write (a flood of
 * guesses cannot load the database); a right one moves the call from ringing to active in one
 * conditional update, so two connects racing with one token cannot both win. The connecting
 * process takes the call's lease.
 */
export async function connectCall(deps: CallDeps, callId: string, token: string) {
  const { ctx } = deps;
  const now = ctx.clock.now();
  const at = now.toISOString();
  const ringing = await ctx.db.kysely.selectFrom('calls').select(['token_hash', 'token_expires_at'])
    .where('id', '=', callId).where('status', '=', 'ringing').executeTakeFirst();
  const stored = ringing?.token_hash ? Buffer.from(ringing.token_hash, 'hex') : null;
  const given = hashToken(token);
  if (!ringing || !stored || stored.length !== given.length || !timingSafeEqual(stored, given)) return null;
  if (!ringing.token_expires_at || Date.parse(ringing.token_expires_at) <= now.getTime()) return null;
  return ctx.db.kysely.transaction().execute(async (trx) => {
    const used = await trx.updateTable('calls')
      .set({ status: 'active', token_hash: null, started_at: at, updated_at: at, lease_owner: deps.owner, lease_expires_at: new Date(now.getTime() + ctx.config.callLeaseMs).toISOString() })
      .where('id', '=', callId).where('status', '=', 'ringing').where('token_hash', '=', ringing.token_hash)
      .executeTakeFirst();
    if (Number(used.numUpdatedRows) !== 1) return null;
    const row = await trx.selectFrom('calls').selectAll().where('id', '=', callId).executeTakeFirstOrThrow();
    await countStatusChange(trx, refOf(row), 'ringing', 'active');
    await enqueueCallStarted(trx, row, now);
    return row;
  });
}

type LiveRow = Pick<Selectable<CallTable>, 'id' | 'organization_id' | 'kind' | 'assistant_id' | 'status' | 'started_at' | 'answered_by' | 'transport'>;

/**
 * Ends a call that is still in the status it was read in: its conclusion, its status, its
 * counters, and (for a call that had started) call_ended and transcript_ready through the
 * outbox. False when the call had moved meanwhile.
 */
export async function endCall(trx: Transaction<Database>, row: LiveRow, end: CallEnd, now: Date): Promise<boolean> {
  const at = now.toISOString();
  const conclusionId = crypto.randomUUID();
  const transcript = JSON.stringify(end.transcript);
  const result = await trx.updateTable('calls').set({
    status: 'ended', ended_at: at, end_reason: end.reason, conclusion_id: conclusionId, token_hash: null,
    lease_owner: null, lease_expires_at: null, failure: end.failure ? JSON.stringify(end.failure) : null, updated_at: at,
    ...(end.turnStats ? {
      false_interruptions: end.turnStats.falseInterruptions, speculative_starts: end.turnStats.speculativeStarts, speculative_discards: end.turnStats.speculativeDiscards,
    } : {}),
  }).where('id', '=', row.id).where('status', '=', row.status).executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) return false;
  await trx.insertInto('conclusions').values({ id: conclusionId, organization_id: row.organization_id, call_id: row.id, outcome: end.outcome, summary: null, transcript, created_at: at }).execute();
  const ref = refOf(row);
  await countStatusChange(trx, ref, row.status as CallStatus, 'ended');
  if (row.status !== 'active' || !sendsEvents(row)) return true; // it never started, or was a test: no events, nothing to analyse
  await scheduleAnalysis(trx, row.id, conclusionId, end, now);
  const event = { organizationId: ref.organizationId, sourceKind: ref.kind, sourceId: ref.sourceId };
  const { reason, outcome, failure } = end;
  await enqueueEvent(trx, {
    ...event, type: 'call_ended',
    payload: { callId: row.id, reason, outcome, conclusionId, failure, answeredBy: row.answered_by, startedAt: row.started_at, endedAt: at },
  }, now);
  await enqueueEvent(trx, {
    ...event, type: 'transcript_ready',
    payload: { callId: row.id, conclusionId, outcome, transcript: end.transcript, toolInvocations: end.toolInvocations },
  }, now);
  return true;
}

/** Where a live session writes: its log as the call runs, and the end with its conclusion and events. */
export function callRecorder(deps: CallDeps, callId: string): CallRecorder {
  const { kysely } = deps.ctx.db;
  return {
    async append(entries) {
      await kysely.transaction().execute(async (trx) => {
        const live = await trx.selectFrom('calls').select('organization_id').where('id', '=', callId).where('status', '=', 'active').executeTakeFirst();
        if (live) await appendEntries(trx, callId, live.organization_id, entries);
      });
    },
    async finish(end) {
      await kysely.transaction().execute(async (trx) => {
        const row = await trx.selectFrom('calls').select(['id', 'organization_id', 'kind', 'assistant_id', 'status', 'started_at', 'answered_by', 'transport'])
          .where('id', '=', callId).where('status', '=', 'active').executeTakeFirst();
        if (row) await endCall(trx, row, end, deps.ctx.clock.now());
      });
    },
  };
}

/** The transcript and tool invocations a call recorded, for ending it from outside its session. */
export async function recordedEnd(trx: Transaction<Database>, callId: string): Promise<Pick<CallEnd, 'transcript' | 'toolInvocations'>> {
  const log = (await loadLog(trx, [callId])).get(callId);
  return { transcript: (log?.transcript ?? []), toolInvocations: log?.toolInvocations ?? [] };
}

/** Every call this process holds gets a fresh lease, in one statement; answers the ids still held. */
export async function renewCallLeases(ctx: Context, owner: string): Promise<Set<string>> {
  const until = new Date(ctx.clock.now().getTime() + ctx.config.callLeaseMs).toISOString();
  const rows = await ctx.db.kysely.updateTable('calls').set({ lease_expires_at: until })
    .where('lease_owner', '=', owner).where('status', 'in', ['ringing', 'active']).returning('id').execute();
  return new Set(rows.map((r) => r.id));
}

/** Deleting an assistant or agent waits until its calls have ended; their records stay. */
export const activeCallsGuard = async (trx: Transaction<Database>, _kind: string, id: string): Promise<string | null> => {
  const live = await trx.selectFrom('calls').select('id').where('assistant_id', '=', id).where('status', 'in', ['ringing', 'active']).executeTakeFirst();
  return live ? 'A call with it is still ringing or in progress; try again when it has ended' : null;
};
