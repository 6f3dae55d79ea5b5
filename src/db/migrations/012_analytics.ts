import { sql } from 'kysely';
import type { Migration } from '../migrate.ts';

/**
 * What the analytics overview reads, each as one range scan of an index:
 * - calls per day by outcome: the conclusions of an organization by time, with the outcome in
 *   the index so SQLite answers from the index alone;
 * - turn latency percentiles: only the assistant's answered turns, in (organization, time)
 *   order with their latency, so a year of a busy organization is read without its transcripts.
 *   Tool calls keep using call_entries_org_at (008): their `ok` is inside the JSON detail.
 */
export const m012Analytics: Migration = {
  name: '012_analytics',
  async up(db) {
    await db.schema.createIndex('conclusions_org_created').on('conclusions').columns(['organization_id', 'created_at', 'outcome']).execute();
    await db.schema
      .createIndex('call_entries_turn_latency')
      .on('call_entries')
      .columns(['organization_id', 'at', 'latency_ms'])
      .where(sql.ref('kind'), '=', 'assistant')
      .where(sql.ref('latency_ms'), 'is not', null)
      .execute();
  },
};
