import type { Migration } from '../migrate.ts';
import { types } from '../columns.ts';

/** The columns of an assistant row that are its identity or bookkeeping, not its configuration. */
const NOT_CONFIGURATION = new Set(['id', 'organization_id', 'kind', 'version', 'created_at', 'updated_at']);
const CHUNK = 500;

/**
 * Versions of assistants and agents:
 * - every change makes an immutable row holding the whole configuration as stored (secrets
 *   sealed), numbered as the assistant's own `version` counts its writes;
 * - a call keeps the version it ran, and an agent task may pin the version its calls run;
 * - every assistant that exists already gets its current configuration as its first version,
 *   numbered as its row is, so that it can be restored after the next change.
 */
export const m016Versions: Migration = {
  name: '016_versions',
  async up(db, dialect) {
    const t = types(dialect);
    await db.schema
      .createTable('assistant_versions')
      .addColumn('assistant_id', t.id, (c) => c.notNull())
      .addColumn('number', 'integer', (c) => c.notNull())
      .addColumn('organization_id', t.id, (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('configuration', t.json, (c) => c.notNull())
      .addColumn('changes', t.json, (c) => c.notNull())
      .addColumn('summary', 'text', (c) => c.notNull())
      .addColumn('restored_from', 'integer')
      .addColumn('token_id', t.id)
      .addColumn('token_name', 'text')
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addPrimaryKeyConstraint('assistant_versions_pk', ['assistant_id', 'number'])
      .execute();
    await db.schema.createIndex('assistant_versions_created').on('assistant_versions').columns(['assistant_id', 'created_at', 'number']).execute();
    await db.schema.alterTable('calls').addColumn('assistant_version', 'integer').execute();
    await db.schema.alterTable('agent_tasks').addColumn('agent_version', 'integer').execute();

    let after: string | null = null;
    for (;;) {
      let page = db.selectFrom('assistants').selectAll().orderBy('id').limit(CHUNK);
      if (after !== null) page = page.where('id', '>', after);
      const rows: Record<string, unknown>[] = await page.execute();
      if (!rows.length) break;
      await db.insertInto('assistant_versions').values(rows.map((row) => ({
        assistant_id: row.id,
        number: row.version,
        organization_id: row.organization_id,
        kind: row.kind,
        configuration: JSON.stringify(Object.fromEntries(Object.entries(row).filter(([column]) => !NOT_CONFIGURATION.has(column)))),
        changes: '[]',
        summary: 'as it was when versions began',
        restored_from: null,
        token_id: null,
        token_name: null,
        created_at: row.updated_at,
      }))).execute();
      after = String(rows.at(-1)?.id);
    }
  },
};
