import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createApiToken, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { toolSchema } from '../helpers/fixtures.ts';
import { startReceiver, type Receiver } from '../calls/support/receiver.ts';

const AUTH = 'Bearer tool-secret-7c1d';

const tool = (name: string, serverUrl: string) => ({
  type: 'tool_webhook',
  parameters: { name, serverUrl, schema: toolSchema(name), headers: { Authorization: AUTH } },
});

for (const dialect of DIALECTS) {
  describe(`POST …/extensions/{id}/test sends a sample tool webhook (${dialect})`, () => {
    let t: TestApp;
    let strict: TestApp;
    let a: Tenant;
    let receiver: Receiver;
    before(async () => {
      receiver = await startReceiver();
      t = await buildTestApp(dialect, { PARLEY_EGRESS_ALLOW: '127.0.0.0/8' });
      strict = await buildTestApp(dialect);
      a = await createTenant(t);
    });
    beforeEach(() => {
      receiver.requests.length = 0;
      receiver.answer = () => ({ body: '{"status":"shipped"}', contentType: 'application/json' });
    });
    after(async () => {
      await t.close();
      await strict.close();
      await receiver.close();
    });

    async function create(app: TestApp, tenant: Tenant, plural: string, extensions: unknown[]) {
      const res = await app.call('POST', `${tenant.orgPath}/${plural}`, { body: { name: 'Tools', extensions } });
      assert.equal(res.statusCode, 201, res.body);
      const data = res.json().data;
      return { base: `${tenant.orgPath}/${plural}/${data.id}`, ids: data.extensions.map((e: any) => e.id) as string[] };
    }

    for (const plural of ['assistants', 'agents']) {
      it(`${plural}: sends exactly the tool webhook with the real header values, and shows the answer`, async () => {
        const { base, ids } = await create(t, a, plural, [tool('lookup_order', receiver.url)]);
        const res = await t.call('POST', `${base}/extensions/${ids[0]}/test`, { body: { parameters: { orderNumber: 'A-17' } } });
        assert.equal(res.statusCode, 200, res.body);
        const data = res.json().data;
        assert.deepEqual({ ...data, latencyMs: 0 }, { ok: true, statusCode: 200, latencyMs: 0, outcome: 'ok', body: '{"status":"shipped"}' });
        assert.ok(Number.isInteger(data.latencyMs) && data.latencyMs >= 0);
        assert.equal(receiver.requests.length, 1);
        const [req] = receiver.requests;
        assert.equal(req?.method, 'POST');
        assert.equal(req?.headers.authorization, AUTH);
        assert.equal(req?.headers['content-type'], 'application/json');
        assert.deepEqual(Object.keys(req?.body), ['type', 'name', 'callId', 'transport', 'parameters']);
        assert.match(req?.body.callId, /^test_[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}$/);
        assert.deepEqual({ ...req?.body, callId: '' }, { type: 'tool_webhook', name: 'lookup_order', callId: '', transport: { type: 'websocket' }, parameters: { orderNumber: 'A-17' } });
        assert.ok(!res.body.includes('tool-secret'), 'the header value never comes back');
      });
    }

    it('sends {} without parameters, shows a non-2xx answer with its body, and cuts a large body at 64 KiB', async () => {
      const { base, ids } = await create(t, a, 'assistants', [tool('lookup_order', receiver.url)]);
      const url = `${base}/extensions/${ids[0]}/test`;
      receiver.answer = () => ({ status: 503, body: 'down for maintenance' });
      const failed = (await t.call('POST', url, { body: {} })).json().data;
      assert.deepEqual(receiver.requests[0]?.body.parameters, {});
      assert.deepEqual({ ...failed, latencyMs: 0 }, { ok: false, statusCode: 503, latencyMs: 0, outcome: 'http_error', body: 'down for maintenance' });
      receiver.answer = () => ({ body: 'x'.repeat(100 * 1024) });
      const large = (await t.call('POST', url, { body: {} })).json().data;
      assert.deepEqual([large.ok, large.outcome, large.statusCode, large.body.length], [false, 'too_large', null, 64 * 1024]);
    });

    it('applies the egress policy: a name that resolves to loopback is refused and nothing is sent', async () => {
      const s = await createTenant(strict);
      const { base, ids } = await create(strict, s, 'assistants', [tool('lookup_order', receiver.url.replace('127.0.0.1', 'localhost'))]);
      const res = await strict.call('POST', `${base}/extensions/${ids[0]}/test`, { body: {} });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual({ ...res.json().data, latencyMs: 0 }, { ok: false, statusCode: null, latencyMs: 0, outcome: 'refused', body: null });
      assert.equal(receiver.requests.length, 0);
    });

    it('is a 404 for an unknown extension, a 400 for one that is not a tool webhook, a 403 without write permission', async () => {
      const { base, ids } = await create(t, a, 'assistants', [tool('lookup_order', receiver.url), { type: 'end_call', parameters: {} }]);
      const unknown = await t.call('POST', `${base}/extensions/5f0c7d1e-3b2a-4c4d-9e8f-0a1b2c3d4e5f/test`, { body: {} });
      assert.equal(unknown.statusCode, 404);
      const endCall = await t.call('POST', `${base}/extensions/${ids[1]}/test`, { body: {} });
      assert.equal(endCall.statusCode, 400);
      assert.equal(endCall.json().error.details[0].path, 'extensionId');
      const viewer = await createApiToken(t, a.vendorId, { role: 'viewer' });
      assert.equal((await t.call('POST', `${base}/extensions/${ids[0]}/test`, { body: {}, token: viewer })).statusCode, 403);
      assert.equal((await t.call('POST', `${base}/extensions/${ids[0]}/test`, { body: { extra: 1 } })).statusCode, 400);
      assert.equal(receiver.requests.length, 0);
    });
  });
}
