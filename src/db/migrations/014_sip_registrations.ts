import type { Migration } from '../migrate.ts';
import { types } from '../columns.ts';

/**
 * Trunk registration:
 * - SIP credentials may ask Parley to keep a registration up with them (`register`, default
 *   false: they then only take INVITEs from their host);
 * - one row per registering credential says which process registers it (a lease, so only one
 *   process does, and another takes over when it stops renewing) and how the registration
 *   stands, which the credential's read shape shows.
 */
export const m014SipRegistrations: Migration = {
  name: '014_sip_registrations',
  async up(db, dialect) {
    const t = types(dialect);
    await db.schema.alterTable('sip_credentials').addColumn('register', t.bool, (c) => c.notNull().defaultTo(dialect === 'postgres' ? false : 0)).execute();
    await db.schema
      .createTable('sip_registrations')
      .addColumn('sip_credential_id', t.id, (c) => c.primaryKey())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('lease_expires_at', t.timestamp, (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('last_status_code', 'integer')
      .addColumn('expires_at', t.timestamp)
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .execute();
  },
};
