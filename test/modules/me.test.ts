import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import type { Context } from '../../src/context.ts';
import type { AuthCache } from '../../src/http/auth-cache.ts';
import { authPlugin, type Principal } from '../../src/http/auth.ts';
import { ALL_PERMISSIONS } from '../../src/modules/tokens/permissions.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createApiToken, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';

for (const dialect of DIALECTS) {
  describe(`GET /api/v1/me (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    before(async () => {
      t = await buildTestApp(dialect);
      a = await createTenant(t);
    });
    after(() => t.close());

    it('tells the platform admin it sees everything', async () => {
      const res = await t.call('GET', '/api/v1/me');
      assert.equal(res.statusCode, 200, res.body);
      const me = res.json().data;
      assert.deepEqual(me, { kind: 'admin', tokenId: null, vendorId: null, organizationId: null, role: null, permissions: [...ALL_PERMISSIONS] });
      assert.ok(me.permissions.includes('providers:write'), 'every resource, main\'s newest included');
    });

    it('tells an organization token its ids, role and permissions', async () => {
      const token = await createApiToken(t, a.vendorId, { role: 'viewer', organizationId: a.organizationId });
      const me = (await t.call('GET', '/api/v1/me', { token })).json().data;
      assert.equal(me.kind, 'token');
      assert.match(me.tokenId, /^[\da-f-]{36}$/);
      assert.equal(me.vendorId, a.vendorId);
      assert.equal(me.organizationId, a.organizationId);
      assert.equal(me.role, 'viewer');
      assert.ok(me.permissions.includes('assistants:read'));
      assert.ok(!me.permissions.some((p: string) => p.endsWith(':write')));
    });

    it('gives a vendor-wide token with explicit permissions a null role and exactly those permissions', async () => {
      const token = await createApiToken(t, a.vendorId, { permissions: ['calls:read', 'assistants:write'] });
      const me = (await t.call('GET', '/api/v1/me', { token })).json().data;
      assert.deepEqual([me.organizationId, me.role, me.permissions], [null, null, ['assistants:write', 'calls:read']]);
    });

    it('is a 401 without a valid token, and a revoked token is refused at once', async () => {
      assert.equal((await t.call('GET', '/api/v1/me', { token: null })).statusCode, 401);
      assert.equal((await t.call('GET', '/api/v1/me', { token: 'prl_aaaaaaaaaaaa_' + 'b'.repeat(43) })).statusCode, 401);
      const created = (await t.call('POST', `/api/v1/vendors/${a.vendorId}/api-tokens`, { body: { name: 'r', role: 'admin' } })).json().data;
      assert.equal((await t.call('GET', '/api/v1/me', { token: created.token })).statusCode, 200);
      await t.call('DELETE', `/api/v1/vendors/${a.vendorId}/api-tokens/${created.id}`);
      assert.equal((await t.call('GET', '/api/v1/me', { token: created.token })).statusCode, 401);
    });
  });
}

describe('the token scope', () => {
  it('refuses, at startup, a token route with a vendor or organization in its path (it would skip the tenant checks)', async () => {
    const app = Fastify();
    // The route check runs when a route is added: nothing here authenticates or reads the cache.
    const unused = { ctx: {} as Context, authenticate: () => Promise.reject(new Error('unused')), cache: {} as AuthCache<Principal> };
    await app.register(authPlugin, unused);
    app.get('/api/v1/me', { config: { auth: { scope: 'token' } } }, async () => 'ok');
    assert.throws(
      () => app.get('/api/v1/vendors/:vendorId/me', { config: { auth: { scope: 'token' } } }, async () => 'no'),
      /has a tenant in its path but the token scope/,
    );
    await app.close();
  });
});
