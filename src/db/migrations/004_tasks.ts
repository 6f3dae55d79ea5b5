import { sql } from 'kysely';
import type { Migration } from '../migrate.ts';
import { types, withResourceColumns } from '../columns.ts';

/**
 * Agent tasks double as the scheduler's job table: a task is claimed by setting a lease
 * (owner + expiry) while IN_PROGRESS, failures are kept on the row (attempts, last_error)
 * and the next try is next_attempt_at. Partial indexes keep "what is due" and "whose lease
 * ran out" lookups proportional to the work, not to the table.
 */
export const m004Tasks: Migration = {
  name: '004_tasks',
  async up(db, dialect) {
    const t = types(dialect);
    await withResourceColumns(db.schema.createTable('agent_tasks'), dialect)
      .addColumn('organization_id', t.id, (c) => c.notNull().references('organizations.id'))
      .addColumn('agent_id', t.id, (c) => c.notNull().references('assistants.id'))
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('user_values', t.json, (c) => c.notNull())
      .addColumn('target_number', 'text', (c) => c.notNull())
      .addColumn('allowed_hours_begin', 'integer')
      .addColumn('allowed_hours', 'integer')
      .addColumn('only_weekdays', t.bool, (c) => c.notNull())
      .addColumn('timezone', 'text')
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('max_attempts', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_at', t.timestamp)
      .addColumn('last_error', 'text')
      .addColumn('conclusion_id', 'text')
      .addColumn('sip_credential_id', t.id)
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', t.timestamp)
      .addColumn('completed_at', t.timestamp)
      .execute();
    for (const col of ['created_at', 'updated_at', 'next_attempt_at', 'target_number']) {
      await db.schema.createIndex(`agent_tasks_agent_${col}`).on('agent_tasks').columns(['agent_id', col, 'id']).execute();
      await db.schema.createIndex(`agent_tasks_agent_status_${col}`).on('agent_tasks').columns(['agent_id', 'status', col, 'id']).execute();
    }
    await db.schema
      .createIndex('agent_tasks_due')
      .on('agent_tasks')
      .columns(['next_attempt_at', 'id'])
      .where(sql.ref('status'), '=', 'SCHEDULED')
      .execute();
    await db.schema
      .createIndex('agent_tasks_leases')
      .on('agent_tasks')
      .columns(['lease_expires_at'])
      .where(sql.ref('status'), '=', 'IN_PROGRESS')
      .execute();
    await db.schema
      .createIndex('agent_tasks_running_by_credential')
      .on('agent_tasks')
      .columns(['sip_credential_id'])
      .where(sql.ref('status'), '=', 'IN_PROGRESS')
      .execute();
    await db.schema
      .createTable('agent_task_pauses')
      .addColumn('agent_id', t.id, (c) => c.primaryKey().references('assistants.id').onDelete('cascade'))
      .addColumn('paused_at', t.timestamp, (c) => c.notNull())
      .execute();
  },
};
