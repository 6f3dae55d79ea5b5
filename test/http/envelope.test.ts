import type { IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { traceIds } from '../../src/http/trace.ts';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function assertEnvelope(body: Record<string, unknown>, success: boolean) {
  assert.equal(body.success, success);
  assert.match(String(body.timestamp), ISO);
  assert.equal(typeof body.traceId, 'string');
  assert.ok('data' in body);
}

function assertError(res: { statusCode: number; json(): any }, status: number, code: string) {
  assert.equal(res.statusCode, status);
  const body = res.json();
  assertEnvelope(body, false);
  assert.equal(body.data, null);
  assert.equal(body.error.code, code);
  assert.ok(Array.isArray(body.error.details));
  assert.equal(typeof body.message, 'string');
  return body;
}

for (const dialect of DIALECTS) {
  describe(`envelope on every status (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    before(async () => {
      t = await buildTestApp(dialect);
      // A route that fails the way a bug would, to see what a 500 shows.
      t.app.log.level = 'silent';
      a = await createTenant(t);
    });
    after(() => t.close());

    it('200 and 201 carry data; 201 has a Location that can be read back', async () => {
      const created = await t.call('POST', `/api/v1/vendors/${a.vendorId}/organizations`, { body: { name: 'Second' } });
      assert.equal(created.statusCode, 201);
      assertEnvelope(created.json(), true);
      const location = created.headers.location as string;
      assert.equal(location, `/api/v1/vendors/${a.vendorId}/organizations/${created.json().data.id}`);
      const read = await t.call('GET', location);
      assert.equal(read.statusCode, 200);
      assertEnvelope(read.json(), true);
      assert.deepEqual(read.json().data, created.json().data);
    });

    it('update and delete answer 200 with data null', async () => {
      const created = await t.call('POST', `/api/v1/vendors/${a.vendorId}/organizations`, { body: { name: 'Temp' } });
      const url = created.headers.location as string;
      const put = await t.call('PUT', url, { body: { name: 'Renamed' } });
      assert.equal(put.statusCode, 200);
      assertEnvelope(put.json(), true);
      assert.equal(put.json().data, null);
      assert.equal((await t.call('GET', url)).json().data.name, 'Renamed');
      const del = await t.call('DELETE', url);
      assert.equal(del.statusCode, 200);
      assert.equal(del.json().data, null);
      assertError(await t.call('GET', url), 404, 'NOT_FOUND');
    });

    it('400 for malformed JSON, wrong types and unknown fields, naming the field, changing nothing', async () => {
      const url = `/api/v1/vendors/${a.vendorId}/organizations`;
      const before = (await t.call('GET', url)).json().totalElements;
      const malformed = await t.app.inject({
        method: 'POST', url, payload: '{"name": "x"', headers: { authorization: 'Bearer test-admin-token-with-enough-length', 'content-type': 'application/json' },
      });
      assertError(malformed, 400, 'VALIDATION_FAILED');
      const wrongType = assertError(await t.call('POST', url, { body: { name: 42 } }), 400, 'VALIDATION_FAILED');
      assert.deepEqual(wrongType.error.details.map((d: { path: string }) => d.path), ['name']);
      const unknown = assertError(await t.call('POST', url, { body: { name: 'ok', admin: true } }), 400, 'VALIDATION_FAILED');
      assert.deepEqual(unknown.error.details, [{ path: 'admin', message: 'is not an allowed field' }]);
      const missing = assertError(await t.call('POST', url, { body: {} }), 400, 'VALIDATION_FAILED');
      assert.deepEqual(missing.error.details, [{ path: 'name', message: 'is required' }]);
      const proto = await t.app.inject({
        method: 'POST', url, payload: '{"name":"x","__proto__":{"admin":true}}', headers: { authorization: 'Bearer test-admin-token-with-enough-length', 'content-type': 'application/json' },
      });
      assertError(proto, 400, 'VALIDATION_FAILED');
      assert.equal((await t.call('GET', url)).json().totalElements, before);
    });

    it('400 for a malformed id in the path', async () => {
      assertError(await t.call('GET', `/api/v1/vendors/not-a-uuid`), 400, 'VALIDATION_FAILED');
      // Longer than any id: the router's own error, still in the envelope (found by the fuzzer).
      assertError(await t.call('GET', `/api/v1/vendors/${'0'.repeat(300)}/organizations`), 400, 'VALIDATION_FAILED');
    });

    it('401, 403 and 404 (unknown route) are envelopes too', async () => {
      assertError(await t.call('GET', a.orgPath, { token: null }), 401, 'UNAUTHORIZED');
      assertError(await t.call('GET', '/api/v1/nothing-here'), 404, 'NOT_FOUND');
      assertError(await t.call('GET', '/api/v1/nothing-here', { token: null }), 404, 'NOT_FOUND');
    });

    it('409 when a vendor still has organizations', async () => {
      assertError(await t.call('DELETE', `/api/v1/vendors/${a.vendorId}`), 409, 'CONFLICT');
      assert.equal((await t.call('GET', `/api/v1/vendors/${a.vendorId}`)).statusCode, 200);
    });

    it('413 for a body over 1 MiB and 415 for a body that is not JSON', async () => {
      const big = await t.call('POST', `/api/v1/vendors/${a.vendorId}/organizations`, { body: { name: 'x'.repeat(1024 * 1024 + 10) } });
      assertError(big, 413, 'PAYLOAD_TOO_LARGE');
      const text = await t.call('POST', `/api/v1/vendors/${a.vendorId}/organizations`, { body: 'name=x', headers: { 'content-type': 'text/plain' } });
      assertError(text, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('traceId comes from X-Request-Id or traceparent and is echoed', async () => {
      const byId = await t.call('GET', a.orgPath, { headers: { 'x-request-id': 'abc-123' } });
      assert.equal(byId.headers['x-request-id'], 'abc-123');
      assert.equal(byId.json().traceId, 'abc-123');
      const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
      const byParent = await t.call('GET', a.orgPath, { headers: { traceparent } });
      assert.equal(byParent.json().traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
      const fresh = await t.call('GET', a.orgPath, { headers: { 'x-request-id': 'bad id with spaces' } });
      assert.match(fresh.json().traceId, /^[\da-f]{32}$/);
      assert.equal(fresh.headers['x-request-id'], fresh.json().traceId);
    });

    it('fresh trace ids are distinct, past a refill of their random pool', () => {
      const next = traceIds();
      const ids = Array.from({ length: 600 }, () => next({ headers: {} } as IncomingMessage));
      for (const id of ids) assert.match(id, /^[\da-f]{32}$/);
      assert.equal(new Set(ids).size, ids.length);
    });
  });

  describe(`500 hides internals (${dialect})`, () => {
    it('answers a generic envelope with no stack, SQL or message', async () => {
      const { buildApp } = await import('../../src/app.ts');
      const { loadConfig } = await import('../../src/config.ts');
      const { createContext } = await import('../../src/context.ts');
      const { createTestDatabase } = await import('../helpers/dialects.ts');
      const database = await createTestDatabase(dialect);
      const config = loadConfig({ PARLEY_ADMIN_TOKEN: 'x'.repeat(32), LOG_LEVEL: 'silent', PARLEY_DIALER: 'none' }, { database: database.config, secretKey: Buffer.alloc(32) });
      const ctx = createContext(config);
      const app = await buildApp(ctx);
      app.get('/api/v1/boom', { config: { auth: { scope: 'public' } } }, async () => {
        throw new Error('SELECT password FROM users WHERE secret = 42');
      });
      const res = await app.inject({ method: 'GET', url: '/api/v1/boom' });
      await app.close();
      await ctx.close();
      await database.drop();
      const body = assertError(res, 500, 'INTERNAL');
      assert.equal(body.message, 'Internal server error');
      assert.doesNotMatch(res.body, /SELECT|password|secret|at .*\.ts/);
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`text the databases cannot store (${dialect})`, () => {
    it('a NUL character anywhere in a body is a 400 on both dialects, never a 500', async () => {
      const t = await buildTestApp(dialect);
      try {
        const res = await t.call('POST', '/api/v1/vendors', { body: { name: 'a\u0000b' } });
        assert.equal(res.statusCode, 400);
        assert.equal(res.json().error.code, 'VALIDATION_FAILED');
        assert.equal((await t.call('GET', '/api/v1/vendors')).json().totalElements, 0);
      } finally {
        await t.close();
      }
    });
  });
}
