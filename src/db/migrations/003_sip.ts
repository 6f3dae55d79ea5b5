import { sql } from 'kysely';
import type { Migration } from '../migrate.ts';
import { types, withResourceColumns } from '../columns.ts';

/**
 * SIP credentials (trunk accounts; the password sealed with the secret box) and the SIP
 * numbers that use them. A number is unique per organization, in E.164.
 *
 * `assistants.telephone_number_id` (002) could not reference `sip_numbers` before this table
 * existed. On PostgreSQL it gets its foreign key now, NOT VALID so rows written before 003
 * are left as they are; it backs the route checks against a concurrent delete. SQLite cannot
 * add a constraint to an existing table; there the check and the write share one
 * transaction on the single writer connection.
 */
export const m003Sip: Migration = {
  name: '003_sip',
  async up(db, dialect) {
    const t = types(dialect);
    await withResourceColumns(db.schema.createTable('sip_credentials'), dialect)
      .addColumn('organization_id', t.id, (c) => c.notNull().references('organizations.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('hostname', 'text', (c) => c.notNull())
      .addColumn('port', 'integer', (c) => c.notNull())
      .addColumn('transport', 'text', (c) => c.notNull())
      .addColumn('username', 'text', (c) => c.notNull())
      .addColumn('password_sealed', 'text', (c) => c.notNull())
      .addColumn('max_agent_tasks', 'integer', (c) => c.notNull())
      .execute();
    await withResourceColumns(db.schema.createTable('sip_numbers'), dialect)
      .addColumn('organization_id', t.id, (c) => c.notNull().references('organizations.id'))
      .addColumn('sip_credential_id', t.id, (c) => c.notNull().references('sip_credentials.id'))
      .addColumn('number', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .execute();
    for (const col of ['name', 'created_at', 'updated_at']) {
      await db.schema.createIndex(`sip_credentials_org_${col}`).on('sip_credentials').columns(['organization_id', col, 'id']).execute();
      await db.schema.createIndex(`sip_numbers_org_${col}`).on('sip_numbers').columns(['organization_id', col, 'id']).execute();
    }
    // Also the index for sorting by number: the value is unique, so `id` never breaks a tie.
    await db.schema.createIndex('sip_numbers_org_number').on('sip_numbers').columns(['organization_id', 'number']).unique().execute();
    await db.schema.createIndex('sip_numbers_credential').on('sip_numbers').column('sip_credential_id').execute();
    if (dialect === 'postgres') {
      await sql`alter table assistants add constraint assistants_telephone_number_fk
        foreign key (telephone_number_id) references sip_numbers (id) not valid`.execute(db);
    }
  },
};
