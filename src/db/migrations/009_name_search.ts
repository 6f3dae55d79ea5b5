import { sql } from 'kysely';
import type { Migration } from '../migrate.ts';

/**
 * The console searches assistants and agents by the start of their name, ignoring case: an
 * index on lower(name) within (organization, kind) keeps that search a range scan.
 * Expression indexes exist on both SQLite (3.9+) and PostgreSQL.
 */
export const m009NameSearch: Migration = {
  name: '009_name_search',
  async up(db) {
    await sql`create index assistants_org_kind_lower_name on assistants (organization_id, kind, lower(name), id)`.execute(db);
  },
};
