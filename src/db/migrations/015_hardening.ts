import type { Migration } from '../migrate.ts';
import { types } from '../columns.ts';

/**
 * Hardening III:
 * - the CallSids of the Twilio voice requests an organization has answered: Twilio's signature
 *   has no timestamp, so a captured request stays valid for ever, and only a CallSid seen before
 *   tells a replay apart. One row per organization and CallSid (the key refuses the second),
 *   swept by age (docs/twilio.md, "Replays");
 * - SIP numbers by number across organizations: a claim of a number is checked against the other
 *   organizations' claims of it on the same trunk address (docs/sip.md, "SIP numbers"), and
 *   every incoming INVITE looks its number up the same way.
 */
export const m015Hardening: Migration = {
  name: '015_hardening',
  async up(db, dialect) {
    const t = types(dialect);
    await db.schema
      .createTable('twilio_call_sids')
      .addColumn('organization_id', t.id, (c) => c.notNull().references('organizations.id').onDelete('cascade'))
      .addColumn('call_sid', 'text', (c) => c.notNull())
      .addColumn('received_at', t.timestamp, (c) => c.notNull())
      .addPrimaryKeyConstraint('twilio_call_sids_pk', ['organization_id', 'call_sid'])
      .execute();
    await db.schema.createIndex('twilio_call_sids_received').on('twilio_call_sids').column('received_at').execute();
    await db.schema.createIndex('sip_numbers_number').on('sip_numbers').column('number').execute();
  },
};
