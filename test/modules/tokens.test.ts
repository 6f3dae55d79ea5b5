import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DIALECTS } from '../helpers/dialects.ts';
import { ADMIN_TOKEN, buildTestApp, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';

for (const dialect of DIALECTS) {
  describe(`API tokens (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    before(async () => {
      t = await buildTestApp(dialect, {}, { logLevel: 'debug' });
      a = await createTenant(t);
    });
    after(() => t.close());

    it('shows the value once, with the prl_ prefix, and keeps only a hash', async () => {
      const res = await t.call('POST', `/api/v1/vendors/${a.vendorId}/api-tokens`, {
        body: { name: 'ci', role: 'editor', organizationId: a.organizationId },
      });
      assert.equal(res.statusCode, 201);
      const data = res.json().data;
      assert.match(data.token, /^prl_[a-z0-9]{12}_[\w-]{43}$/);
      assert.equal(data.role, 'editor');
      assert.ok(data.permissions.includes('assistants:write'));
      assert.ok(!data.permissions.includes('tokens:write'));
      const read = await t.call('GET', res.headers.location as string);
      assert.equal(read.json().data.token, undefined, 'never shown again');
      assert.equal(read.json().data.prefix, data.token.split('_').slice(0, 2).join('_'));

      const secret = data.token.slice('prl_'.length + 13); // the secret may itself contain '_'
      const rows = await sql<Record<string, unknown>>`select * from api_tokens`.execute(t.db.kysely);
      const dump = JSON.stringify(rows.rows);
      assert.ok(!dump.includes(secret), 'the secret is not stored');
      assert.ok(!dump.includes(data.token));
    });

    it('the new token reads its organization (the README walk-through)', async () => {
      const res = await t.call('POST', `/api/v1/vendors/${a.vendorId}/api-tokens`, {
        body: { name: 'walk', role: 'editor', organizationId: a.organizationId },
      });
      const org = await t.call('GET', a.orgPath, { token: res.json().data.token });
      assert.equal(org.statusCode, 200);
      assert.equal(org.json().data.id, a.organizationId);
    });

    it('rejects role and permissions together, neither, unknown permissions, a past expiry and a foreign organization', async () => {
      const url = `/api/v1/vendors/${a.vendorId}/api-tokens`;
      const cases: [unknown, string][] = [
        [{ name: 'x', role: 'viewer', permissions: ['assistants:read'] }, 'permissions'],
        [{ name: 'x' }, 'role'],
        [{ name: 'x', permissions: ['assistants:fly'] }, 'permissions[0]'],
        [{ name: 'x', role: 'owner' }, 'role'],
        [{ name: 'x', role: 'viewer', expiresAt: '2001-01-01T00:00:00Z' }, 'expiresAt'],
        [{ name: 'x', role: 'viewer', organizationId: '00000000-0000-4000-8000-000000000000' }, 'organizationId'],
      ];
      for (const [body, path] of cases) {
        const res = await t.call('POST', url, { body });
        assert.equal(res.statusCode, 400, JSON.stringify(body));
        assert.ok(res.json().error.details.some((d: { path: string }) => d.path === path), `${path}: ${res.body}`);
      }
    });

    it('logs never carry the authorization header or a token value', async () => {
      const res = await t.call('POST', `/api/v1/vendors/${a.vendorId}/api-tokens`, { body: { name: 'log', role: 'viewer' } });
      const token = res.json().data.token as string;
      await t.call('GET', a.orgPath, { token });
      await t.call('GET', a.orgPath, { token: token + 'x' });
      t.app.log.info({ headers: { authorization: `Bearer ${token}` }, password: 'hunter2', nested: { secret: 's3cr3t' } }, 'probe');
      const all = t.logs();
      assert.ok(t.logs().split('\n').length > 3, 'something was logged');
      assert.ok(all.includes('probe'));
      for (const needle of [token, ADMIN_TOKEN, 'hunter2', 's3cr3t']) assert.ok(!all.includes(needle), needle);
    });
  });
}
