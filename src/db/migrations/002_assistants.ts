import type { Migration } from '../migrate.ts';
import { types, withResourceColumns } from '../columns.ts';

/**
 * Strategies, and assistants and agents in one table told apart by `kind` (they share one shape).
 * Extensions and call event hooks live as JSON arrays on the row: they are always read and
 * replaced with their assistant, so one row read serves a GET and one write serves a PUT.
 */
export const m002Assistants: Migration = {
  name: '002_assistants',
  async up(db, dialect) {
    const t = types(dialect);
    await withResourceColumns(db.schema.createTable('llm_strategies'), dialect)
      .addColumn('organization_id', t.id, (c) => c.notNull().references('organizations.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('parameters', t.json, (c) => c.notNull())
      .execute();
    await withResourceColumns(db.schema.createTable('assistants'), dialect)
      .addColumn('organization_id', t.id, (c) => c.notNull().references('organizations.id'))
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('system_prompt', 'text')
      .addColumn('system_prompt_greeting', 'text')
      .addColumn('strategy_id', t.id, (c) => c.references('llm_strategies.id'))
      .addColumn('telephone_number_id', t.id)
      .addColumn('extensions', t.json, (c) => c.notNull())
      .addColumn('call_event_hooks', t.json, (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .execute();
    for (const col of ['name', 'created_at', 'updated_at']) {
      await db.schema.createIndex(`llm_strategies_org_${col}`).on('llm_strategies').columns(['organization_id', col, 'id']).execute();
      await db.schema.createIndex(`assistants_org_kind_${col}`).on('assistants').columns(['organization_id', 'kind', col, 'id']).execute();
    }
    await db.schema.createIndex('assistants_strategy').on('assistants').column('strategy_id').execute();
    await db.schema.createIndex('assistants_telephone_number').on('assistants').column('telephone_number_id').execute();
  },
};
