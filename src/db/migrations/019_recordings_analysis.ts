import { sql } from 'kysely';
import type { Migration } from '../migrate.ts';
import { types } from '../columns.ts';

/**
 * After the call: recordings and the analysis that fills the conclusion.
 * - assistants and agents may ask for both (`recording`, `analysis`, JSON; versioned with the
 *   rest of their configuration);
 * - a call's recording is a row of its own, which is also the durable job that stores it (on
 *   disk or in an S3-compatible bucket) once the call has ended;
 * - a conclusion keeps what the analysis found, and is the analysis job's row too; a call keeps
 *   a pass/fail verdict beside its own columns, indexed, so the calls list filters by it.
 */
export const m019RecordingsAnalysis: Migration = {
  name: '019_recordings_analysis',
  async up(db, dialect) {
    const t = types(dialect);
    await db.schema.alterTable('assistants').addColumn('recording', t.json).execute();
    await db.schema.alterTable('assistants').addColumn('analysis', t.json).execute();

    await db.schema
      .createTable('call_recordings')
      .addColumn('call_id', t.id, (c) => c.primaryKey())
      .addColumn('organization_id', t.id, (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('storage', 'text', (c) => c.notNull())
      .addColumn('object_key', 'text', (c) => c.notNull())
      .addColumn('spool_path', 'text')
      .addColumn('data_key', 'text', (c) => c.notNull())
      .addColumn('sample_rate', 'integer', (c) => c.notNull())
      .addColumn('channels', 'integer', (c) => c.notNull())
      .addColumn('chunk_bytes', 'integer', (c) => c.notNull())
      .addColumn('bytes', 'bigint', (c) => c.notNull())
      .addColumn('duration_ms', 'bigint', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_at', t.timestamp)
      .addColumn('retry_until', t.timestamp)
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', t.timestamp)
      .addColumn('last_error', 'text')
      .addColumn('ready_at', t.timestamp)
      .addColumn('deleted_at', t.timestamp)
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('call_recordings_due').on('call_recordings').columns(['status', 'next_attempt_at']).execute();
    await db.schema.createIndex('call_recordings_age').on('call_recordings').columns(['status', 'created_at']).execute();

    await db.schema.alterTable('conclusions').addColumn('data', t.json).execute();
    await db.schema.alterTable('conclusions').addColumn('data_error', t.json).execute();
    await db.schema.alterTable('conclusions').addColumn('success', t.json).execute();
    await db.schema.alterTable('conclusions').addColumn('analyzed_at', t.timestamp).execute();
    await db.schema.alterTable('conclusions').addColumn('analysis_status', 'text').execute();
    await db.schema.alterTable('conclusions').addColumn('analysis_attempts', 'integer').execute();
    await db.schema.alterTable('conclusions').addColumn('analysis_next_at', t.timestamp).execute();
    await db.schema.alterTable('conclusions').addColumn('analysis_retry_until', t.timestamp).execute();
    await db.schema.alterTable('conclusions').addColumn('analysis_lease_owner', 'text').execute();
    await db.schema.alterTable('conclusions').addColumn('analysis_lease_expires_at', t.timestamp).execute();
    await db.schema.alterTable('conclusions').addColumn('analysis_error', 'text').execute();
    await db.schema
      .createIndex('conclusions_analysis_due')
      .on('conclusions')
      .columns(['analysis_status', 'analysis_next_at'])
      .where(sql.ref('analysis_status'), 'is not', null)
      .execute();

    await db.schema.alterTable('calls').addColumn('success', t.bool).execute();
    await db.schema.createIndex('calls_by_success').on('calls').columns(['organization_id', 'success', 'created_at', 'id']).execute();
    await db.schema.createIndex('calls_by_source_success').on('calls').columns(['organization_id', 'kind', 'assistant_id', 'success', 'created_at', 'id']).execute();
  },
};
