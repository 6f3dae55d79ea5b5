import { sql, type Selectable } from 'kysely';
import type { CallSourceKind, CallStore, LiveCall } from '../../calls/store.ts';
import type { TransportInfo } from '../../calls/transports/transport.ts';
import { withClaimLock } from '../../db/claim-lock.ts';
import { readJson } from '../../db/values.ts';
import { CREDENTIAL_LOCK, credentialLoad } from '../sip/credential-load.ts';
import type { CallTable } from './calls.table.ts';
import { callRecorder, connectCall, insertLiveCall, renewCallLeases, type CallDeps } from './calls.service.ts';

/** A connected call's row as the engine sees it. */
export function liveCallOf(row: Selectable<CallTable>): LiveCall {
  return {
    id: row.id,
    organizationId: row.organization_id,
    kind: row.kind as CallSourceKind,
    sourceId: row.assistant_id,
    sourceVersion: row.assistant_version,
    traceId: row.trace_id,
    transport: readJson<TransportInfo>(row.transport),
    userValues: readJson<Record<string, unknown>>(row.user_values),
    audio: row.audio ? readJson<{ encoding: string; sampleRate: number }>(row.audio) : null,
  };
}

/** The engine's call records, kept in the calls table of this process's database. */
export function callStore(deps: CallDeps): CallStore {
  const { kysely } = deps.ctx.db;
  const recorderOf = (callId: string) => callRecorder(deps, callId);
  return {
    async connect(callId, token) {
      const row = await connectCall(deps, callId, token);
      return row ? liveCallOf(row) : null;
    },

    async insertLive(call) {
      return liveCallOf(await kysely.transaction().execute((trx) => insertLiveCall(trx, deps, call)));
    },

    admit(call, maxCalls) {
      // Under the credentials' lock: their load (running agent tasks and live calls, the same
      // count the task claim compares) must be under their cap, and the organization under its own.
      return withClaimLock(deps.ctx.db, CREDENTIAL_LOCK, async (trx) => {
        const { rows } = await sql<{ load: number }>`select ${credentialLoad(sql.val(call.sipCredentialId))} as load`.execute(trx);
        if (Number(rows[0]?.load ?? 0) >= maxCalls) return 'busy' as const;
        try {
          return liveCallOf(await insertLiveCall(trx, deps, call));
        } catch (err) {
          // The organization at PARLEY_MAX_CALLS_PER_ORGANIZATION (409 on the API) is busy here too.
          if ((err as { statusCode?: number }).statusCode === 409) return 'busy' as const;
          throw err;
        }
      });
    },

    recorder: recorderOf,

    fail(callId, reason, failure = null) {
      return recorderOf(callId).finish({ reason, outcome: reason === 'error' ? 'failed' : 'abandoned', failure, transcript: [], toolInvocations: [] });
    },

    async noteSetup(callId, { unfilled, providers }) {
      await kysely.updateTable('calls')
        .set({ unfilled_placeholders: unfilled.length ? JSON.stringify(unfilled) : null, providers: providers ? JSON.stringify(providers) : null })
        .where('id', '=', callId).execute();
    },

    async noteDetection(callId, { answeredBy, detection }) {
      await kysely.updateTable('calls').set({ answered_by: answeredBy, detection: JSON.stringify(detection) }).where('id', '=', callId).execute();
    },

    async noteProviders(callId, providers) {
      await kysely.updateTable('calls').set({ providers: JSON.stringify(providers) }).where('id', '=', callId).execute();
    },

    async saveMedia(callId, media) {
      await kysely.updateTable('calls').set({ media: JSON.stringify(media) }).where('id', '=', callId).execute();
      const ended = await kysely.selectFrom('calls').select('conclusion_id').where('id', '=', callId).executeTakeFirst();
      return ended?.conclusion_id ?? null;
    },

    renewLeases: () => renewCallLeases(deps.ctx, deps.owner),
  };
}
