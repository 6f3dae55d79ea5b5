import type { Transaction } from 'kysely';
import type { Migration } from '../migrate.ts';
import { types, withResourceColumns } from '../columns.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations see the schema as it was, not today's types
type AnyDb = any;

/** What each role gained with the `providers` resource, as the roles were when this migration was written. */
const GAINED: Readonly<Record<string, readonly string[]>> = {
  viewer: ['providers:read'],
  editor: ['providers:read', 'providers:write'],
  admin: ['providers:read', 'providers:write'],
};

/** jsonb reads back parsed on PostgreSQL, text on SQLite. */
const readList = (value: unknown): string[] => (typeof value === 'string' ? JSON.parse(value) : value) as string[];

interface TokenRow {
  id: string;
  role: string | null;
  permissions: unknown;
  created_by: string | null;
}

/**
 * Tokens store their permission list when they are made, so a role token made before this
 * migration would lack the new `providers:*` permissions its role now carries, and could no longer
 * mint a token of its own role (it cannot grant what it does not hold). Role tokens gain what
 * their role gained, but only as far as their creator holds it too: nobody ends up holding more
 * than the token that made them. Tokens made with an explicit permission list are left as they are.
 */
async function extendRoleTokens(db: Transaction<AnyDb>): Promise<void> {
  const rows = (await db.selectFrom('api_tokens').select(['id', 'role', 'permissions', 'created_by']).execute()) as TokenRow[];
  const byId = new Map(rows.map((row) => [row.id, row]));
  const held = new Map<string, Set<string>>();
  const holdings = (row: TokenRow): Set<string> => {
    const known = held.get(row.id);
    if (known) return known;
    const own = new Set(readList(row.permissions));
    held.set(row.id, own); // set before recursing: a (corrupt) cycle of creators ends here
    // No creator: the platform admin or the CLI made it. A creator that is gone grants nothing.
    const creator = row.created_by ? byId.get(row.created_by) : undefined;
    const creatorHolds = row.created_by ? (creator ? holdings(creator) : new Set<string>()) : null;
    for (const permission of GAINED[row.role ?? ''] ?? []) {
      if (!creatorHolds || creatorHolds.has(permission)) own.add(permission);
    }
    return own;
  };
  for (const row of rows) {
    const before = new Set(readList(row.permissions));
    const after = holdings(row);
    if (after.size === before.size) continue;
    await db.updateTable('api_tokens').set({ permissions: JSON.stringify([...after]) }).where('id', '=', row.id).execute();
  }
}

/**
 * Provider credentials: per organization, one per provider, the key sealed with the secret box.
 * The unique index is the backstop of the route's own duplicate check (two creates at once).
 */
export const m010ProviderCredentials: Migration = {
  name: '010_provider_credentials',
  async up(db, dialect) {
    const t = types(dialect);
    await withResourceColumns(db.schema.createTable('provider_credentials'), dialect)
      .addColumn('organization_id', t.id, (c) => c.notNull().references('organizations.id'))
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('api_key_sealed', 'text', (c) => c.notNull())
      .addColumn('base_url', 'text')
      .addColumn('account_sid', 'text')
      .execute();
    // Also the index for sorting by provider: unique per organization, so `id` never breaks a tie.
    await db.schema.createIndex('provider_credentials_org_provider').on('provider_credentials').columns(['organization_id', 'provider']).unique().execute();
    for (const col of ['created_at', 'updated_at']) {
      await db.schema.createIndex(`provider_credentials_org_${col}`).on('provider_credentials').columns(['organization_id', col, 'id']).execute();
    }
    await extendRoleTokens(db);
  },
};
