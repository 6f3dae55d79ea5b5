import type { Migration } from '../migrate.ts';
import { types, withResourceColumns } from '../columns.ts';

/**
 * Call records and their conclusions. A call keeps the assistant or agent id without a foreign
 * key: the record is history and outlives the assistant. Both go with their organization.
 * Transcript and tool invocations are JSON on the row, written as the call runs and at its end.
 */
export const m005Calls: Migration = {
  name: '005_calls',
  async up(db, dialect) {
    const t = types(dialect);
    await withResourceColumns(db.schema.createTable('calls'), dialect)
      .addColumn('organization_id', t.id, (c) => c.notNull().references('organizations.id').onDelete('cascade'))
      .addColumn('assistant_id', t.id, (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('transport', t.json, (c) => c.notNull())
      .addColumn('user_values', t.json, (c) => c.notNull())
      .addColumn('trace_id', 'text', (c) => c.notNull())
      .addColumn('started_at', t.timestamp)
      .addColumn('ended_at', t.timestamp)
      .addColumn('end_reason', 'text')
      .addColumn('transcript', t.json, (c) => c.notNull())
      .addColumn('tool_invocations', t.json, (c) => c.notNull())
      .addColumn('conclusion_id', t.id)
      .addColumn('token_hash', 'text')
      .addColumn('token_expires_at', t.timestamp)
      .execute();
    for (const col of ['created_at', 'updated_at']) {
      await db.schema.createIndex(`calls_org_${col}`).on('calls').columns(['organization_id', col, 'id']).execute();
      await db.schema.createIndex(`calls_org_status_${col}`).on('calls').columns(['organization_id', 'status', col, 'id']).execute();
      await db.schema.createIndex(`calls_source_${col}`).on('calls').columns(['assistant_id', col, 'id']).execute();
      await db.schema.createIndex(`calls_source_status_${col}`).on('calls').columns(['assistant_id', 'status', col, 'id']).execute();
    }
    await db.schema
      .createTable('conclusions')
      .addColumn('id', t.id, (c) => c.primaryKey())
      .addColumn('organization_id', t.id, (c) => c.notNull().references('organizations.id').onDelete('cascade'))
      .addColumn('call_id', t.id, (c) => c.notNull().references('calls.id').onDelete('cascade'))
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('summary', 'text')
      .addColumn('transcript', t.json, (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('conclusions_call').on('conclusions').column('call_id').unique().execute();
  },
};
