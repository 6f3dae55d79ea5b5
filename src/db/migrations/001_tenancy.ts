import type { Migration } from '../migrate.ts';
import { types, withResourceColumns } from '../columns.ts';

export const m001Tenancy: Migration = {
  name: '001_tenancy',
  async up(db, dialect) {
    const t = types(dialect);
    await withResourceColumns(db.schema.createTable('vendors'), dialect)
      .addColumn('name', 'text', (c) => c.notNull())
      .execute();
    await withResourceColumns(db.schema.createTable('organizations'), dialect)
      .addColumn('vendor_id', t.id, (c) => c.notNull().references('vendors.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .execute();
    await withResourceColumns(db.schema.createTable('api_tokens'), dialect)
      .addColumn('vendor_id', t.id, (c) => c.notNull().references('vendors.id').onDelete('cascade'))
      .addColumn('organization_id', t.id, (c) => c.references('organizations.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('role', 'text')
      .addColumn('permissions', t.json, (c) => c.notNull())
      .addColumn('public_id', 'text', (c) => c.notNull().unique())
      .addColumn('secret_hash', 'text', (c) => c.notNull())
      .addColumn('expires_at', t.timestamp)
      .addColumn('revoked_at', t.timestamp)
      .execute();
    for (const col of ['name', 'created_at', 'updated_at']) {
      await db.schema.createIndex(`vendors_${col}`).on('vendors').columns([col, 'id']).execute();
      await db.schema
        .createIndex(`organizations_vendor_${col}`)
        .on('organizations')
        .columns(['vendor_id', col, 'id'])
        .execute();
      await db.schema
        .createIndex(`api_tokens_vendor_${col}`)
        .on('api_tokens')
        .columns(['vendor_id', col, 'id'])
        .execute();
    }
    await db.schema.createIndex('api_tokens_organization').on('api_tokens').column('organization_id').execute();
    await db.schema
      .createTable('settings')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('counters')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('value', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('idempotency_keys')
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('request_hash', 'text', (c) => c.notNull())
      .addColumn('status_code', 'integer')
      .addColumn('response_body', 'text')
      .addColumn('location', 'text')
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addPrimaryKeyConstraint('idempotency_keys_pk', ['scope', 'key'])
      .execute();
    await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').column('created_at').execute();
  },
};
