import type { Context } from '../../context.ts';
import type { Sweep } from '../../jobs/runner.ts';
import { endCall, recordedEnd } from './calls.service.ts';

const BATCH = 100;

/**
 * Calls nobody will end otherwise: a ringing call whose token expired unused ends as
 * not_connected; a ringing or active call whose process stopped renewing its lease (it died,
 * or froze past the lease) ends as server_lost, with its record, its conclusion and, if it had
 * started, its call_ended and transcript_ready hooks. Any process's runner may sweep.
 */
export function callsSweep(ctx: Context): Sweep {
  const { kysely } = ctx.db;
  return {
    name: 'calls_expiry',
    everyMs: Math.min(5_000, ctx.config.callLeaseMs / 2),
    async run(now) {
      const at = now.toISOString();
      const stale = await kysely.selectFrom('calls').select(['id', 'organization_id', 'kind', 'assistant_id', 'status', 'started_at', 'answered_by', 'transport', 'token_expires_at', 'lease_expires_at'])
        .where((eb) => eb.or([
          eb.and([eb('status', '=', 'ringing'), eb('token_expires_at', '<=', at)]),
          eb.and([eb('status', 'in', ['ringing', 'active']), eb('lease_expires_at', '<', at)]),
        ]))
        .limit(BATCH).execute();
      let ended = 0;
      for (const row of stale) {
        const unused = row.status === 'ringing' && row.token_expires_at !== null && row.token_expires_at <= at;
        const done = await kysely.transaction().execute(async (trx) => {
          const log = row.status === 'active' ? await recordedEnd(trx, row.id) : { transcript: [], toolInvocations: [] };
          const reason = unused ? 'not_connected' : 'server_lost';
          const outcome = row.status === 'active' ? 'failed' : 'abandoned';
          const failure = reason === 'server_lost' ? { source: 'server', statusCode: null, message: 'the process holding the call stopped' } : null;
          return endCall(trx, row, { reason, outcome, failure, ...log }, now);
        });
        if (done) ended++;
      }
      return ended;
    },
  };
}
