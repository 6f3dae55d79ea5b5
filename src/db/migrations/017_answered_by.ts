import { sql } from 'kysely';
import type { Migration } from '../migrate.ts';
import { types } from '../columns.ts';

/**
 * Who answered a placed call: `calls.answered_by` (human, voicemail, screening, unknown; null
 * when no detection ran) and `calls.detection` (the verdict, when, what was done, the signals).
 * The overview counts answered-by per day from the partial index, over the calls that have one.
 */
export const m017AnsweredBy: Migration = {
  name: '017_answered_by',
  async up(db, dialect) {
    const t = types(dialect);
    await db.schema.alterTable('calls').addColumn('answered_by', 'text').execute();
    await db.schema.alterTable('calls').addColumn('detection', t.json).execute();
    await db.schema.createIndex('calls_answered_by_day').on('calls').columns(['organization_id', 'ended_at', 'answered_by'])
      .where(sql.ref('answered_by'), 'is not', null).execute();
  },
};
