import { sql } from 'kysely';
import type { Migration } from '../migrate.ts';
import { types } from '../columns.ts';

/**
 * The webhook outbox and its attempt log. Deliveries go with their organization; they outlive
 * the assistant that produced them (a log), and a hook that is gone fails them at send time.
 * Partial indexes keep "what is due" and "whose lease ran out" proportional to the work.
 */
export const m006Events: Migration = {
  name: '006_events',
  async up(db, dialect) {
    const t = types(dialect);
    await db.schema
      .createTable('webhook_deliveries')
      // msg_<uuid>: sent as `webhook-id`, so it is text rather than a uuid column.
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', t.id, (c) => c.notNull().references('organizations.id').onDelete('cascade'))
      .addColumn('hook_id', t.id, (c) => c.notNull())
      .addColumn('source_kind', 'text', (c) => c.notNull())
      .addColumn('source_id', t.id, (c) => c.notNull())
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('payload', t.json, (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_at', t.timestamp)
      .addColumn('retry_until', t.timestamp, (c) => c.notNull())
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', t.timestamp)
      .addColumn('last_status_code', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('last_latency_ms', 'integer')
      .addColumn('delivered_at', t.timestamp)
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .execute();
    for (const col of ['created_at', 'updated_at']) {
      await db.schema.createIndex(`webhook_deliveries_org_${col}`).on('webhook_deliveries').columns(['organization_id', col, 'id']).execute();
    }
    for (const filter of ['status', 'hook_id', 'event_type']) {
      await db.schema.createIndex(`webhook_deliveries_org_${filter}`).on('webhook_deliveries').columns(['organization_id', filter, 'created_at', 'id']).execute();
    }
    await db.schema
      .createIndex('webhook_deliveries_due')
      .on('webhook_deliveries')
      .columns(['next_attempt_at', 'id'])
      .where(sql.ref('status'), '=', 'pending')
      .execute();
    await db.schema
      .createIndex('webhook_deliveries_leases')
      .on('webhook_deliveries')
      .columns(['lease_expires_at'])
      .where(sql.ref('lease_owner'), 'is not', null)
      .execute();
    await db.schema
      .createTable('webhook_delivery_attempts')
      .addColumn('delivery_id', 'text', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('at', t.timestamp, (c) => c.notNull())
      .addColumn('status_code', 'integer')
      .addColumn('latency_ms', 'integer')
      .addColumn('error', 'text')
      .addPrimaryKeyConstraint('webhook_delivery_attempts_pk', ['delivery_id', 'attempt'])
      .execute();
  },
};
