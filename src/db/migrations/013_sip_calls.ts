import { sql } from 'kysely';
import type { Migration } from '../migrate.ts';
import { types } from '../columns.ts';

/**
 * SIP phone calls:
 * - a call placed or taken through a SIP credential names it, so that inbound calls count
 *   against the credential's maxAgentTasks together with the running agent tasks;
 * - a SIP call keeps its media statistics (RTP packets, loss, jitter, the far end's RTCP).
 */
export const m013SipCalls: Migration = {
  name: '013_sip_calls',
  async up(db, dialect) {
    const t = types(dialect);
    await db.schema.alterTable('calls').addColumn('sip_credential_id', t.id).execute();
    await db.schema.alterTable('calls').addColumn('media', t.json).execute();
    await db.schema
      .createIndex('calls_live_by_credential')
      .on('calls')
      .columns(['sip_credential_id'])
      .where(sql.ref('status'), 'in', sql`('ringing', 'active')`)
      .execute();
  },
};
