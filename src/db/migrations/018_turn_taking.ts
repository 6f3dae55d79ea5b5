import { sql } from 'kysely';
import type { Migration } from '../migrate.ts';

/**
 * Turn-taking on the record:
 * - a voice call counts its false interruptions and its speculative answers (started, dropped);
 * - an answered voice turn keeps its response latency (the caller's last speech to the first
 *   audio frame sent), with a partial index like 012's so the overview's percentiles read only
 *   those rows; its parts and its endpointing sit in the entry's JSON detail.
 */
export const m018TurnTaking: Migration = {
  name: '018_turn_taking',
  async up(db) {
    await db.schema.alterTable('calls').addColumn('false_interruptions', 'integer').execute();
    await db.schema.alterTable('calls').addColumn('speculative_starts', 'integer').execute();
    await db.schema.alterTable('calls').addColumn('speculative_discards', 'integer').execute();
    await db.schema.alterTable('call_entries').addColumn('response_ms', 'integer').execute();
    await db.schema
      .createIndex('call_entries_response_latency')
      .on('call_entries')
      .columns(['organization_id', 'at', 'response_ms'])
      .where(sql.ref('kind'), '=', 'assistant')
      .where(sql.ref('response_ms'), 'is not', null)
      .execute();
  },
};
