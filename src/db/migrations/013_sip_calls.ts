import { sql } from 'kysely';
import type { Migration } from '../migrate.ts';
import { types } from '../columns.ts';

/**
 * SIP phone calls:
 * - a call placed or taken through a SIP credential names it, so that inbound calls count
 *   against the credential's maxAgentTasks together with the running agent tasks;
 * - a SIP call keeps its media statistics (RTP packets, loss, jitter, the far end's RTCP);
 * - a credential may register to its trunk (`register`), and the registration's lease and
 *   state live in `sip_registrations`: one process holds each registration at a time.
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
    await db.schema.alterTable('sip_credentials').addColumn('register', t.bool, (c) => c.notNull().defaultTo(dialect === 'postgres' ? sql`false` : 0)).execute();
    await db.schema
      .createTable('sip_registrations')
      .addColumn('sip_credential_id', t.id, (c) => c.primaryKey().references('sip_credentials.id').onDelete('cascade'))
      .addColumn('owner', 'text')
      .addColumn('lease_expires_at', t.timestamp)
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('last_status_code', 'integer')
      .addColumn('expires_at', t.timestamp)
      .addColumn('reason', 'text')
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .execute();
  },
};
