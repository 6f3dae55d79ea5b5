import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createApiToken, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';

const MISSING_ORG = '00000000-0000-4000-8000-000000000000';

for (const dialect of DIALECTS) {
  describe(`auth: 401/403/404 rules (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    let b: Tenant;
    let other: Tenant;
    let editorA: string;
    let viewerA: string;
    let vendorAdmin: string;

    before(async () => {
      t = await buildTestApp(dialect);
      a = await createTenant(t, 'Acme');
      const orgB = await t.call('POST', `/api/v1/vendors/${a.vendorId}/organizations`, { body: { name: 'Acme second' } });
      b = { vendorId: a.vendorId, organizationId: orgB.json().data.id, orgPath: `/api/v1/vendors/${a.vendorId}/organizations/${orgB.json().data.id}` };
      other = await createTenant(t, 'Other');
      editorA = await createApiToken(t, a.vendorId, { role: 'editor', organizationId: a.organizationId });
      viewerA = await createApiToken(t, a.vendorId, { role: 'viewer', organizationId: a.organizationId });
      vendorAdmin = await createApiToken(t, a.vendorId, { role: 'admin' });
    });
    after(() => t.close());

    const expectStatus = async (status: number, code: string, method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, token: string | null | undefined, body?: unknown) => {
      const res = await t.call(method, url, { token, body });
      assert.equal(res.statusCode, status, `${method} ${url}: ${res.body}`);
      const json = res.json();
      assert.equal(json.success, false);
      assert.equal(json.error.code, code);
      assert.equal(json.data, null);
      return json;
    };

    it('401 without a token, with a malformed one, with another scheme, and with an unknown one', async () => {
      await expectStatus(401, 'UNAUTHORIZED', 'GET', a.orgPath, null);
      const basic = await t.app.inject({ method: 'GET', url: a.orgPath, headers: { authorization: 'Basic dXNlcjpwYXNz' } });
      assert.equal(basic.statusCode, 401);
      await expectStatus(401, 'UNAUTHORIZED', 'GET', a.orgPath, 'not-a-token');
      await expectStatus(401, 'UNAUTHORIZED', 'GET', a.orgPath, `prl_abcdefghijkl_${'A'.repeat(43)}`);
    });

    it('401 for a token changed by one character', async () => {
      for (const index of [4, 10, editorA.length - 1]) {
        const c = editorA[index] === 'a' ? 'b' : 'a';
        const mutated = editorA.slice(0, index) + c + editorA.slice(index + 1);
        await expectStatus(401, 'UNAUTHORIZED', 'GET', a.orgPath, mutated);
      }
    });

    it('401 for a revoked token, at once', async () => {
      const token = await createApiToken(t, a.vendorId, { role: 'viewer' });
      assert.equal((await t.call('GET', a.orgPath, { token })).statusCode, 200);
      const list = await t.call('GET', `/api/v1/vendors/${a.vendorId}/api-tokens?size=100`);
      const id = list.json().data.find((x: { prefix: string }) => token.startsWith(x.prefix + '_')).id;
      assert.equal((await t.call('DELETE', `/api/v1/vendors/${a.vendorId}/api-tokens/${id}`)).statusCode, 200);
      const json = await expectStatus(401, 'UNAUTHORIZED', 'GET', a.orgPath, token);
      assert.match(json.message, /revoked/);
    });

    it('401 for an expired token', async () => {
      const res = await t.call('POST', `/api/v1/vendors/${a.vendorId}/api-tokens`, {
        body: { name: 'short', role: 'viewer', expiresAt: new Date(Date.now() + 1500).toISOString() },
      });
      assert.equal(res.statusCode, 201);
      const { token } = res.json().data;
      assert.equal((await t.call('GET', a.orgPath, { token })).statusCode, 200);
      await new Promise((resolve) => setTimeout(resolve, 1600));
      const json = await expectStatus(401, 'UNAUTHORIZED', 'GET', a.orgPath, token);
      assert.match(json.message, /expired/);
    });

    it('403 for a token of organization A used on organization B of the same vendor', async () => {
      await expectStatus(403, 'FORBIDDEN', 'GET', b.orgPath, editorA);
      await expectStatus(403, 'FORBIDDEN', 'PUT', b.orgPath, editorA, { name: 'x' });
    });

    it('403 for a token of one vendor used on another vendor, even where nothing exists', async () => {
      await expectStatus(403, 'FORBIDDEN', 'GET', other.orgPath, vendorAdmin);
      await expectStatus(403, 'FORBIDDEN', 'GET', `/api/v1/vendors/${other.vendorId}/organizations`, vendorAdmin);
      await expectStatus(403, 'FORBIDDEN', 'GET', `/api/v1/vendors/${MISSING_ORG}/organizations/${MISSING_ORG}`, vendorAdmin);
    });

    it('403 for a viewer writing, and an editor minting tokens', async () => {
      assert.equal((await t.call('GET', a.orgPath, { token: viewerA })).statusCode, 200);
      await expectStatus(403, 'FORBIDDEN', 'PUT', a.orgPath, viewerA, { name: 'renamed' });
      await expectStatus(403, 'FORBIDDEN', 'DELETE', a.orgPath, viewerA);
      await expectStatus(403, 'FORBIDDEN', 'POST', `/api/v1/vendors/${a.vendorId}/api-tokens`, editorA, { name: 'x', role: 'viewer' });
      const org = await t.call('GET', a.orgPath);
      assert.equal(org.json().data.name, 'Acme main', 'nothing changed');
    });

    it('403 for any token on the platform admin API, and for an organization token creating organizations', async () => {
      await expectStatus(403, 'FORBIDDEN', 'GET', '/api/v1/vendors', vendorAdmin);
      await expectStatus(403, 'FORBIDDEN', 'POST', '/api/v1/vendors', vendorAdmin, { name: 'Sneaky' });
      const orgAdmin = await createApiToken(t, a.vendorId, { role: 'admin', organizationId: a.organizationId });
      await expectStatus(403, 'FORBIDDEN', 'POST', `/api/v1/vendors/${a.vendorId}/organizations`, orgAdmin, { name: 'x' });
    });

    it('403 when a token tries to grant more than it holds', async () => {
      const orgAdmin = await createApiToken(t, a.vendorId, { role: 'admin', organizationId: a.organizationId });
      const limited = await createApiToken(t, a.vendorId, { permissions: ['tokens:write', 'assistants:read'] }, orgAdmin);
      await expectStatus(403, 'FORBIDDEN', 'POST', `/api/v1/vendors/${a.vendorId}/api-tokens`, limited, { name: 'x', role: 'admin' });
      await expectStatus(403, 'FORBIDDEN', 'POST', `/api/v1/vendors/${a.vendorId}/api-tokens`, orgAdmin, { name: 'x', role: 'viewer', organizationId: b.organizationId });
    });

    it('404 for an organization or vendor that does not exist inside the caller scope', async () => {
      await expectStatus(404, 'NOT_FOUND', 'GET', `/api/v1/vendors/${a.vendorId}/organizations/${MISSING_ORG}`, vendorAdmin);
      await expectStatus(404, 'NOT_FOUND', 'GET', `/api/v1/vendors/${a.vendorId}/organizations/${other.organizationId}`, vendorAdmin);
      await expectStatus(404, 'NOT_FOUND', 'GET', `/api/v1/vendors/${MISSING_ORG}/organizations/${MISSING_ORG}`, undefined);
      await expectStatus(404, 'NOT_FOUND', 'GET', `/api/v1/vendors/${a.vendorId}/organizations/${other.organizationId}`, undefined);
      await expectStatus(404, 'NOT_FOUND', 'GET', `/api/v1/vendors/${MISSING_ORG}`, undefined);
    });

    it('an organization token lists only its own organization and tokens', async () => {
      const orgs = await t.call('GET', `/api/v1/vendors/${a.vendorId}/organizations`, { token: viewerA });
      assert.equal(orgs.statusCode, 200);
      assert.deepEqual(orgs.json().data.map((o: { id: string }) => o.id), [a.organizationId]);
      assert.equal(orgs.json().totalElements, 1);
      const all = await t.call('GET', `/api/v1/vendors/${a.vendorId}/organizations`, { token: vendorAdmin });
      assert.equal(all.json().totalElements, 2);
      const tokens = await t.call('GET', `/api/v1/vendors/${a.vendorId}/api-tokens?size=100`, { token: viewerA });
      assert.ok(tokens.json().data.every((x: { organizationId: string }) => x.organizationId === a.organizationId));
    });
  });
}
