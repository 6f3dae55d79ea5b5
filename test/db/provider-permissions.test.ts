import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/config.ts';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { readJson } from '../../src/db/values.ts';
import { migrations } from '../../src/db/migrations/index.ts';
import { ROLES } from '../../src/modules/tokens/permissions.ts';
import { generateToken } from '../../src/modules/tokens/token-secret.ts';
import { ADMIN_TOKEN, buildTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS, createTestDatabase } from '../helpers/dialects.ts';

/** What a role held before the providers resource existed. */
const before010 = (role: keyof typeof ROLES) => ROLES[role].filter((p) => !p.startsWith('providers:'));
const AT = '2026-01-01T00:00:00.000Z';

/** The schema as it was before 010: every earlier migration applied, and recorded as applied. */
async function migrateUpTo(db: Db, name: string): Promise<void> {
  const earlier = migrations.slice(0, migrations.findIndex((m) => m.name === name));
  // `any`: the schema as it was then, not today's Database type.
  await (db.kysely as any).transaction().execute(async (trx: any) => {
    await trx.schema.createTable('parley_migrations').addColumn('name', 'text', (c: any) => c.primaryKey()).addColumn('applied_at', 'text', (c: any) => c.notNull()).execute();
    for (const migration of earlier) {
      await migration.up(trx, db.dialect);
      await trx.insertInto('parley_migrations').values({ name: migration.name, applied_at: AT }).execute();
    }
  });
}

for (const dialect of DIALECTS) {
  describe(`migration 010 and the tokens made before it (${dialect})`, () => {
    it('role tokens gain what their role gained, never more than their creator holds; explicit lists stay', async () => {
      const database = await createTestDatabase(dialect);
      const db = openDatabase(database.config);
      let t: TestApp | undefined;
      try {
        await migrateUpTo(db, '010_provider_credentials');
        const vendorId = crypto.randomUUID();
        const organizationId = crypto.randomUUID();
        await db.kysely.insertInto('vendors').values({ id: vendorId, name: 'V', created_at: AT, updated_at: AT }).execute();
        await db.kysely.insertInto('organizations').values({ id: organizationId, vendor_id: vendorId, name: 'O', created_at: AT, updated_at: AT }).execute();
        const admin = generateToken();
        const ids: Record<string, string> = {};
        const token = async (name: string, role: keyof typeof ROLES | null, permissions: readonly string[], createdBy: string | null, secret = generateToken()) => {
          ids[name] = crypto.randomUUID();
          await db.kysely.insertInto('api_tokens').values({
            id: ids[name], vendor_id: vendorId, organization_id: organizationId, name, role, permissions: JSON.stringify(permissions),
            public_id: secret.publicId, secret_hash: secret.secretHash, created_at: AT, updated_at: AT, expires_at: null, revoked_at: null, created_by: createdBy,
          }).execute();
        };
        await token('admin', 'admin', before010('admin'), null, admin);
        await token('editorOfAdmin', 'editor', before010('editor'), ids.admin as string);
        await token('viewerOfEditor', 'viewer', before010('viewer'), ids.editorOfAdmin as string);
        await token('explicit', null, ['assistants:read', 'assistants:write'], null);
        await token('viewerOfExplicit', 'viewer', ['assistants:read'], ids.explicit as string);
        await token('orphan', 'editor', before010('editor'), crypto.randomUUID());

        assert.deepEqual(await migrate(db), migrations.slice(migrations.findIndex((m) => m.name === '010_provider_credentials')).map((m) => m.name));
        const rows = await db.kysely.selectFrom('api_tokens').select(['name', 'permissions']).execute();
        const providers = Object.fromEntries(rows.map((r) => [r.name, readJson<string[]>(r.permissions).filter((p) => p.startsWith('providers:')).sort()]));
        assert.deepEqual(providers, {
          admin: ['providers:read', 'providers:write'],
          editorOfAdmin: ['providers:read', 'providers:write'],
          viewerOfEditor: ['providers:read'],
          explicit: [],
          viewerOfExplicit: [], // its creator never held providers:read
          orphan: [], // its creator is gone: nothing to vouch for more
        });
        const admins = readJson<string[]>(rows.find((r) => r.name === 'admin')?.permissions);
        assert.deepEqual([...admins].sort(), [...ROLES.admin].sort(), 'the admin token holds exactly its role again');
        await db.close();

        // The old admin token still mints an editor token (the role now includes providers:*) and manages provider credentials.
        const config = loadConfig({ PARLEY_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'warn' }, { database: database.config, secretKey: randomBytes(32) });
        t = await buildTestApp(dialect, {}, { reuse: { database, config } });
        const minted = await t.call('POST', `/api/v1/vendors/${vendorId}/api-tokens`, { token: admin.value, body: { name: 'new editor', role: 'editor' } });
        assert.equal(minted.statusCode, 201, minted.body);
        const orgPath = `/api/v1/vendors/${vendorId}/organizations/${organizationId}`;
        const created = await t.call('POST', `${orgPath}/provider-credentials`, { token: minted.json().data.token, body: { provider: 'deepgram', apiKey: 'k' } });
        assert.equal(created.statusCode, 201, created.body);
        assert.equal((await t.call('GET', `${orgPath}/provider-credentials`, { token: admin.value })).json().totalElements, 1);
      } finally {
        if (t) {
          await t.close(); // drops the database too
        } else {
          await db.close().catch(() => {}); // it may be closed already
          await database.drop();
        }
      }
    });
  });
}
