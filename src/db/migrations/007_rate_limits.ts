import type { Migration } from '../migrate.ts';

/** Per-token request quotas, one row per token and window, shared by every process. */
export const m007RateLimits: Migration = {
  name: '007_rate_limits',
  async up(db) {
    await db.schema
      .createTable('rate_limit_windows')
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('window_start', 'bigint', (c) => c.notNull())
      .addColumn('used', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('rate_limit_windows_pk', ['key', 'window_start'])
      .execute();
  },
};
