import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { createParley, ParleyError, type ParleyClient } from '@parley/sdk';
import { DIALECTS } from '../helpers/dialects.ts';
import { ADMIN_TOKEN, buildTestApp, createTenant, type TestApp, type Tenant } from '../helpers/app.ts';

/** The SDK against the real service on loopback: the envelope, its errors, pages and idempotency keys. */
for (const dialect of DIALECTS) {
  describe(`@parley/sdk against the service (${dialect})`, () => {
    let t: TestApp;
    let tenant: Tenant;
    let parley: ParleyClient;
    let baseUrl: string;
    /** The headers of every request the SDK sent, in order. */
    const sent: Headers[] = [];

    before(async () => {
      t = await buildTestApp(dialect);
      tenant = await createTenant(t);
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      parley = createParley({
        baseUrl,
        token: ADMIN_TOKEN,
        middleware: [{ onRequest: ({ request }) => void sent.push(new Headers(request.headers)) }],
      });
    });
    after(() => t.close());

    it('answers the envelope\'s data, and null for an update', async () => {
      const org = parley.organization(tenant.vendorId, tenant.organizationId);
      const created = await org.createAssistant({ body: { name: 'Front desk', systemPrompt: 'Be brief.' } });
      assert.equal(created.name, 'Front desk');
      assert.deepEqual(created.extensions, []);
      const read = await org.getAssistant({ path: { assistantId: created.id } });
      assert.equal(read.systemPrompt, 'Be brief.');
      assert.equal(await org.updateAssistant({ path: { assistantId: created.id }, body: { ...read, name: 'Front desk 2' } }), null);
      assert.equal((await org.getAssistant({ path: { assistantId: created.id } })).name, 'Front desk 2');
      assert.equal(await org.deleteAssistant({ path: { assistantId: created.id } }), null);
      assert.equal(sent.at(-1)?.get('authorization'), `Bearer ${ADMIN_TOKEN}`);
    });

    it('throws ParleyError with the status, code, field details and trace id', async () => {
      const org = parley.organization(tenant.vendorId, tenant.organizationId);
      const missing = await org.getAssistant({ path: { assistantId: '00000000-0000-4000-8000-000000000000' }, headers: { 'x-request-id': 'sdk-test-404' } })
        .then(() => assert.fail('a 404 resolved'), (err: unknown) => err);
      assert.ok(missing instanceof ParleyError);
      assert.equal(missing.status, 404);
      assert.equal(missing.code, 'NOT_FOUND');
      assert.equal(missing.traceId, 'sdk-test-404');
      assert.deepEqual(missing.details, []);

      const invalid = await org.createLlmGenerationStrategy({ body: { name: 'Loud', type: 'text_to_speech', parameters: { temperature: 7 } } })
        .then(() => assert.fail('a 400 resolved'), (err: unknown) => err as ParleyError);
      assert.equal(invalid.status, 400);
      assert.equal(invalid.code, 'VALIDATION_FAILED');
      assert.equal(invalid.details[0]?.path, 'parameters.temperature');
      assert.match(invalid.traceId ?? '', /\S/);

      const stranger = createParley({ baseUrl, token: 'prl_not_a_token' });
      const refused = await stranger.getMe().then(() => assert.fail('a 401 resolved'), (err: unknown) => err as ParleyError);
      assert.deepEqual([refused.status, refused.code], [401, 'UNAUTHORIZED']);
    });

    it('walks every page of a list with paginate, in the order asked', async () => {
      const org = parley.organization(tenant.vendorId, tenant.organizationId);
      for (let i = 0; i < 23; i++) await org.createAgent({ body: { name: `Agent ${String(i).padStart(2, '0')}` } });
      const names: string[] = [];
      for await (const agent of org.paginate('listAgents', { query: { size: 10, sort: 'name,desc' } })) names.push(agent.name);
      assert.equal(names.length, 23);
      assert.equal(names[0], 'Agent 22');
      assert.equal(names.at(-1), 'Agent 00');
      const page = await org.listAgents({ query: { size: 10, page: 2 } });
      assert.deepEqual([page.page, page.size, page.totalElements, page.totalPages, page.data.length], [2, 10, 23, 3, 3]);
    });

    it('sends an Idempotency-Key with each create: a new one per call unless given', async () => {
      const org = parley.organization(tenant.vendorId, tenant.organizationId);
      const before = sent.length;
      const a = await org.createLlmGenerationStrategy({ body: { name: 'Twice', type: 'text_to_speech', parameters: {} } });
      const b = await org.createLlmGenerationStrategy({ body: { name: 'Twice', type: 'text_to_speech', parameters: {} } });
      assert.notEqual(a.id, b.id);
      const keys = sent.slice(before).map((h) => h.get('idempotency-key'));
      assert.equal(keys.length, 2);
      assert.match(keys[0] ?? '', /^sdk_[0-9a-f]{32}$/);
      assert.notEqual(keys[0], keys[1]);

      const first = await org.createLlmGenerationStrategy({ body: { name: 'Once', type: 'text_to_speech', parameters: {} }, idempotencyKey: 'order-17' });
      const again = await org.createLlmGenerationStrategy({ body: { name: 'Once', type: 'text_to_speech', parameters: {} }, idempotencyKey: 'order-17' });
      assert.equal(again.id, first.id);
      await org.listLlmGenerationStrategies();
      assert.equal(sent.at(-1)?.get('idempotency-key'), null, 'a read carries no key');
    });

    it('fills vendorId for a vendor scope, and takes every path parameter unscoped', async () => {
      const organization = await parley.vendor(tenant.vendorId).getOrganization({ path: { organizationId: tenant.organizationId } });
      assert.equal(organization.id, tenant.organizationId);
      const vendor = await parley.getVendor({ path: { vendorId: tenant.vendorId } });
      assert.equal(vendor.id, tenant.vendorId);
    });
  });
}
