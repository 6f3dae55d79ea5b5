import type { Insertable } from 'kysely';
import type { Context } from '../../context.ts';
import type { Executor } from '../../db/schema.ts';
import type { Sweep } from '../../jobs/runner.ts';
import type { TwilioCallSidTable } from './twilio.table.ts';

/**
 * How long a CallSid is remembered. Twilio ends a call after 24 hours at the most, so a CallSid
 * must be kept at least that long for a replay during the real call to be refused; kept for 30
 * days, a captured request is refused for a month after the call (docs/twilio.md, "Replays").
 */
export const CALL_SID_RETENTION_MS = 30 * 86_400_000;

/**
 * Records that the organization received this CallSid: true the first time, false for a
 * replay. The primary key decides, so requests racing each other get one true between them.
 */
export async function claimCallSid(db: Executor, organizationId: string, callSid: string, at: Date): Promise<boolean> {
  const row: Insertable<TwilioCallSidTable> = { organization_id: organizationId, call_sid: callSid, received_at: at.toISOString() };
  const result = await db.insertInto('twilio_call_sids').values(row)
    .onConflict((oc) => oc.columns(['organization_id', 'call_sid']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/** Gives a CallSid back when its request failed on our side, so Twilio's own retry is answered. */
export async function releaseCallSid(db: Executor, organizationId: string, callSid: string): Promise<void> {
  await db.deleteFrom('twilio_call_sids').where('organization_id', '=', organizationId).where('call_sid', '=', callSid).execute();
}

/** CallSids older than the retention go. */
export function twilioCallSidsSweep(ctx: Context): Sweep {
  return {
    name: 'twilio_call_sids_retention',
    everyMs: 10 * 60_000,
    async run(now) {
      const result = await ctx.db.kysely.deleteFrom('twilio_call_sids')
        .where('received_at', '<', new Date(now.getTime() - CALL_SID_RETENTION_MS).toISOString()).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
