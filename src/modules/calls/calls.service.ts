import { createHash, randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { CallOutcome, CallRecorder, CallState } from '../../calls/record.ts';
import type { EndReason } from '../../calls/frames.ts';
import type { TransportInfo } from '../../calls/transports/transport.ts';
import type { Clock } from '../../clock.ts';
import type { Database } from '../../db/schema.ts';
import { readJson } from '../../db/values.ts';
import { notFound } from '../../http/errors.ts';
import { findAssistant, type Kind } from '../assistants/assistants.repository.ts';
import { enqueueEvent } from '../events/outbox.ts';
import { countNewCall, countStatusChange, refOf } from './calls.repository.ts';

/** How long the single-use token in a websocketUrl works. */
export const TOKEN_TTL_MS = 60_000;

export interface CallDeps {
  db: Kysely<Database>;
  clock: Clock;
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export interface NewCall {
  kind: Kind;
  organizationId: string;
  sourceId: string;
  userValues: Record<string, unknown>;
  traceId: string;
  transport: TransportInfo;
}

/** A `ringing` call and its connect token; only the token's hash is stored. */
export async function createCall(deps: CallDeps, call: NewCall): Promise<{ id: string; token: string; expiresAt: string }> {
  const now = deps.clock.now();
  const at = now.toISOString();
  const id = crypto.randomUUID();
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + TOKEN_TTL_MS).toISOString();
  await deps.db.transaction().execute(async (trx) => {
    if (!(await findAssistant(trx, call.kind, call.organizationId, call.sourceId))) throw notFound(call.kind === 'agent' ? 'Agent' : 'Assistant');
    await trx.insertInto('calls').values({
      id, organization_id: call.organizationId, assistant_id: call.sourceId, kind: call.kind, status: 'ringing',
      transport: JSON.stringify(call.transport), user_values: JSON.stringify(call.userValues), trace_id: call.traceId,
      started_at: null, ended_at: null, end_reason: null, transcript: '[]', tool_invocations: '[]', conclusion_id: null,
      token_hash: hashToken(token), token_expires_at: expiresAt, created_at: at, updated_at: at,
    }).execute();
    await countNewCall(trx, { organizationId: call.organizationId, kind: call.kind, sourceId: call.sourceId }, 'ringing');
  });
  return { id, token, expiresAt };
}

/**
 * Uses the token: one conditional update moves the call from ringing to active only when the
 * token matches, is unused and unexpired, so two connects racing with one token cannot both win.
 */
export async function connectCall(deps: CallDeps, callId: string, token: string) {
  const now = deps.clock.now();
  const at = now.toISOString();
  return deps.db.transaction().execute(async (trx) => {
    const used = await trx.updateTable('calls')
      .set({ status: 'active', token_hash: null, started_at: at, updated_at: at })
      .where('id', '=', callId).where('status', '=', 'ringing').where('token_hash', '=', hashToken(token)).where('token_expires_at', '>', at)
      .executeTakeFirst();
    if (Number(used.numUpdatedRows) !== 1) return null;
    const row = await trx.selectFrom('calls').selectAll().where('id', '=', callId).executeTakeFirstOrThrow();
    const ref = refOf(row);
    await countStatusChange(trx, ref, 'ringing', 'active');
    await enqueueEvent(trx, {
      organizationId: ref.organizationId, sourceKind: ref.kind, sourceId: ref.sourceId, type: 'call_started',
      payload: { callId, transport: readJson<TransportInfo>(row.transport), startedAt: at },
    }, now);
    return row;
  });
}

async function conclude(trx: Transaction<Database>, callId: string, organizationId: string, outcome: CallOutcome, transcript: string, at: string) {
  const id = crypto.randomUUID();
  await trx.insertInto('conclusions').values({ id, organization_id: organizationId, call_id: callId, outcome, summary: null, transcript, created_at: at }).execute();
  return id;
}

/** A ringing call whose token expired unused ends as not_connected (abandoned, no events: it never started). */
export async function expireCall(deps: CallDeps, callId: string): Promise<void> {
  const at = deps.clock.now().toISOString();
  await deps.db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('calls').select(['organization_id', 'kind', 'assistant_id'])
      .where('id', '=', callId).where('status', '=', 'ringing').where('token_expires_at', '<=', at).executeTakeFirst();
    if (!row) return;
    const conclusionId = await conclude(trx, callId, row.organization_id, 'abandoned', '[]', at);
    await trx.updateTable('calls')
      .set({ status: 'ended', token_hash: null, ended_at: at, end_reason: 'not_connected', conclusion_id: conclusionId, updated_at: at })
      .where('id', '=', callId).execute();
    await countStatusChange(trx, refOf(row), 'ringing', 'ended');
  });
}

/** Where a live session writes: its transcript after each turn, and the end with its conclusion and events. */
export function callRecorder(deps: CallDeps, callId: string): CallRecorder {
  return {
    async checkpoint(state: CallState) {
      await deps.db.updateTable('calls')
        .set({ transcript: JSON.stringify(state.transcript), tool_invocations: JSON.stringify(state.toolInvocations), updated_at: deps.clock.now().toISOString() })
        .where('id', '=', callId).where('status', '=', 'active').execute();
    },
    async finish(state: CallState, reason: EndReason, outcome: CallOutcome) {
      const now = deps.clock.now();
      const at = now.toISOString();
      const transcript = JSON.stringify(state.transcript);
      await deps.db.transaction().execute(async (trx) => {
        const row = await trx.selectFrom('calls').select(['organization_id', 'kind', 'assistant_id', 'started_at'])
          .where('id', '=', callId).where('status', '=', 'active').executeTakeFirst();
        if (!row) return;
        const conclusionId = await conclude(trx, callId, row.organization_id, outcome, transcript, at);
        await trx.updateTable('calls').set({
          status: 'ended', ended_at: at, end_reason: reason, transcript, tool_invocations: JSON.stringify(state.toolInvocations),
          conclusion_id: conclusionId, updated_at: at,
        }).where('id', '=', callId).execute();
        const ref = refOf(row);
        await countStatusChange(trx, ref, 'active', 'ended');
        const event = { organizationId: ref.organizationId, sourceKind: ref.kind, sourceId: ref.sourceId };
        await enqueueEvent(trx, { ...event, type: 'call_ended', payload: { callId, reason, outcome, conclusionId, startedAt: row.started_at, endedAt: at } }, now);
        await enqueueEvent(trx, {
          ...event, type: 'transcript_ready',
          payload: { callId, conclusionId, outcome, transcript: state.transcript, toolInvocations: state.toolInvocations },
        }, now);
      });
    },
  };
}

/** Deleting an assistant or agent waits until its calls have ended; their records stay. */
export const activeCallsGuard = async (trx: Transaction<Database>, _kind: string, id: string): Promise<string | null> => {
  const live = await trx.selectFrom('calls').select('id').where('assistant_id', '=', id).where('status', 'in', ['ringing', 'active']).executeTakeFirst();
  return live ? 'A call with it is still ringing or in progress; try again when it has ended' : null;
};
