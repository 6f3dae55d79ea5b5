import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';

for (const dialect of DIALECTS) {
  describe(`system routes and the OpenAPI document (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect);
    });
    after(() => t.close());

    it('GET /openapi.json is a valid OpenAPI 3.1 document covering every API route', async () => {
      const res = await t.call('GET', '/openapi.json', { token: null });
      assert.equal(res.statusCode, 200);
      const doc = res.json();
      assert.equal(doc.openapi, '3.1.0');
      const validator = new Validator();
      const result = await validator.validate(doc);
      assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
      assert.equal(validator.version, '3.1');
      const documented = new Set(
        Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
          Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
        ),
      );
      const routes = t.app.printRoutes({ commonPrefix: false });
      assert.ok(routes.includes('api/v1/vendors'));
      for (const expected of [
        'POST /api/v1/vendors',
        'GET /api/v1/vendors/{vendorId}/organizations/{organizationId}',
        'DELETE /api/v1/vendors/{vendorId}/api-tokens/{tokenId}',
      ]) {
        assert.ok(documented.has(expected), expected);
      }
      assert.ok(doc.components.schemas.ErrorEnvelope, 'the error envelope is a shared component');
    });

    it('serves the docs page', async () => {
      const res = await t.call('GET', '/docs/', { token: null });
      assert.equal(res.statusCode, 200);
      assert.match(res.body, /swagger-ui/i);
    });

    it('healthz and readyz answer in the envelope; metrics in the Prometheus format', async () => {
      const health = await t.call('GET', '/healthz', { token: null });
      assert.equal(health.statusCode, 200);
      assert.deepEqual(health.json().data, { status: 'ok' });
      const ready = await t.call('GET', '/readyz', { token: null });
      assert.equal(ready.statusCode, 200);
      assert.deepEqual(ready.json().data, { status: 'ready' });
      const metrics = await t.call('GET', '/metrics', { token: null });
      assert.equal(metrics.statusCode, 200);
      assert.match(metrics.body, /parley_http_requests_total\{method="GET",route="\/readyz",status="200"\} 1/);
    });
  });
}

describe('readyz when the database is gone', () => {
  it('answers 503 UNAVAILABLE', async () => {
    const t = await buildTestApp('sqlite');
    await t.db.close();
    const res = await t.call('GET', '/readyz', { token: null });
    assert.equal(res.statusCode, 503);
    assert.equal(res.json().error.code, 'UNAVAILABLE');
    await t.app.close();
    await t.database.drop();
  });
});
