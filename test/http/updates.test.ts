import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { hook, strategyBody, toolWebhook } from '../helpers/fixtures.ts';

const MERGE_PATCH = { 'content-type': 'application/merge-patch+json' };
const trunk = { name: 'Trunk', hostname: 'sip.example.com', username: 'acme', password: 'never-sent' };
const paths = (body: string) => (JSON.parse(body).error.details as { path: string }[]).map((d) => d.path);

for (const dialect of DIALECTS) {
  describe(`PUT with read-only fields, PATCH with JSON Merge Patch (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    const patch = (url: string, body: unknown, headers: Record<string, string> = MERGE_PATCH) => t.call('PATCH', url, { body, headers });
    const read = async (url: string) => (await t.call('GET', url)).json().data;

    /** Every resource with PUT, created once: its item URL. */
    const items: Record<string, string> = {};

    before(async () => {
      t = await buildTestApp(dialect);
      a = await createTenant(t);
      const create = async (url: string, body: unknown) => {
        const res = await t.call('POST', url, { body });
        assert.equal(res.statusCode, 201, res.body);
        return res.headers.location as string;
      };
      items.vendor = `/api/v1/vendors/${a.vendorId}`;
      items.organization = a.orgPath;
      items.strategy = await create(`${a.orgPath}/llm-generation-strategies`, strategyBody);
      items.credential = await create(`${a.orgPath}/sip/credentials`, trunk);
      const credentialId = items.credential.split('/').pop();
      items.number = await create(`${a.orgPath}/sip/numbers`, { number: '+4930123456', sipCredentialId: credentialId });
      const assistant = { name: 'Front desk', systemPrompt: 'Be brief', extensions: [toolWebhook('lookup_order')], callEventHooks: [hook()] };
      items.assistant = await create(`${a.orgPath}/assistants`, assistant);
      items.agent = await create(`${a.orgPath}/agents`, { ...assistant, telephoneNumberId: items.number.split('/').pop() });
    });
    after(() => t.close());

    it('GET-edit-PUT works on every resource: the read-only fields sent back are ignored', async () => {
      for (const [what, url] of Object.entries(items)) {
        const before = await read(url);
        const res = await t.call('PUT', url, { body: { ...before, name: `${String(before.name)} (edited)` } });
        assert.equal(res.statusCode, 200, `${what}: ${res.body}`);
        assert.deepEqual(res.json().data, null);
        const after = await read(url);
        assert.equal(after.name, `${String(before.name)} (edited)`, what);
        assert.equal(after.id, before.id, what);
        assert.equal(after.createdAt, before.createdAt, what);
      }
    });

    it('a read-only field that contradicts the resource is a 400 naming it; the same instant or id spelled otherwise is not', async () => {
      const strategy = await read(items.strategy as string);
      const cases: [Record<string, unknown>, string][] = [
        [{ id: '00000000-0000-4000-8000-000000000000' }, 'id'],
        [{ organizationId: '00000000-0000-4000-8000-000000000000' }, 'organizationId'],
        [{ createdAt: '2001-01-01T00:00:00.000Z' }, 'createdAt'],
      ];
      for (const [change, path] of cases) {
        const res = await t.call('PUT', items.strategy as string, { body: { ...strategy, ...change } });
        assert.equal(res.statusCode, 400, res.body);
        assert.deepEqual(paths(res.body), [path]);
        assert.match(res.json().error.details[0].message, /read-only/);
      }
      const sameInstant = new Date(strategy.createdAt).toISOString().replace('Z', '+00:00');
      const res = await t.call('PUT', items.strategy as string, { body: { ...strategy, id: strategy.id.toUpperCase(), createdAt: sameInstant } });
      assert.equal(res.statusCode, 200, res.body);
      const vendor = await t.call('PUT', items.vendor as string, { body: { name: 'Acme', vendorId: a.vendorId } });
      assert.deepEqual([vendor.statusCode, paths(vendor.body)], [400, ['vendorId']], 'a field the read shape lacks is unknown, not read-only');
    });

    it('PATCH changes only what the patch names, nested objects merge, and application/json is accepted too', async () => {
      const before = await read(items.strategy as string);
      const res = await patch(items.strategy as string, { parameters: { voice: { speed: 1.5 }, vad: null }, name: 'Quick voice' });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json().data, null);
      const after = await read(items.strategy as string);
      assert.equal(after.name, 'Quick voice');
      assert.equal(after.type, before.type);
      assert.deepEqual(after.parameters.voice, { ...before.parameters.voice, speed: 1.5 });
      assert.equal(after.parameters.vad, undefined, 'null removes a field');
      assert.equal(after.parameters.temperature, before.parameters.temperature);
      const plain = await patch(items.strategy as string, { name: 'Plain JSON' }, { 'content-type': 'application/json' });
      assert.equal(plain.statusCode, 200, plain.body);
      assert.equal((await read(items.strategy as string)).name, 'Plain JSON');
      const text = await patch(items.strategy as string, 'name=x', { 'content-type': 'text/plain' });
      assert.equal(text.statusCode, 415);
    });

    it('the patched resource is validated as a PUT body: bad values, unknown fields and contradicted read-only fields are 400s', async () => {
      const before = await read(items.strategy as string);
      const cases: [unknown, string][] = [
        [{ parameters: { temperature: 3 } }, 'parameters.temperature'],
        [{ type: 'smoke_signals' }, 'type'],
        [{ colour: 'blue' }, 'colour'],
        [{ name: null }, 'name'],
        [{ id: '00000000-0000-4000-8000-000000000000' }, 'id'],
      ];
      for (const [body, path] of cases) {
        const res = await patch(items.strategy as string, body);
        assert.equal(res.statusCode, 400, `${JSON.stringify(body)}: ${res.body}`);
        assert.ok(paths(res.body).includes(path), `${path}: ${res.body}`);
      }
      const notAnObject = await patch(items.strategy as string, ['name']);
      assert.equal(notAnObject.statusCode, 400, notAnObject.body);
      assert.deepEqual(await read(items.strategy as string), before, 'nothing was written');
      const missing = await patch(`${a.orgPath}/llm-generation-strategies/00000000-0000-4000-8000-000000000000`, { name: 'x' });
      assert.equal(missing.statusCode, 404);
    });

    it('PATCH of an assistant keeps masked secrets, and a kept secret still never follows a new server', async () => {
      const url = items.assistant as string;
      const stored = () => t.db.kysely.selectFrom('assistants').select(['extensions', 'call_event_hooks']).where('id', '=', url.split('/').pop() as string).executeTakeFirstOrThrow();
      const sealedBefore = JSON.stringify(await stored());
      const renamed = await patch(url, { name: 'Front desk 2', systemPromptGreeting: 'Hello!' });
      assert.equal(renamed.statusCode, 200, renamed.body);
      assert.equal(JSON.stringify(await stored()), sealedBefore, 'the sealed header and hook secret are kept as they were');
      const current = await read(url);
      assert.equal(current.extensions[0].parameters.headers.Authorization, '********');

      const moved = structuredClone(current.extensions);
      moved[0].parameters.serverUrl = 'https://elsewhere.example.net/orders';
      const refused = await patch(url, { extensions: moved });
      assert.equal(refused.statusCode, 400, refused.body);
      assert.deepEqual(paths(refused.body), ['extensions[0].parameters.headers.Authorization']);
      assert.match(refused.body, /never follows a new destination/);
      moved[0].parameters.headers.Authorization = 'Bearer new-token';
      assert.equal((await patch(url, { extensions: moved })).statusCode, 200);
      assert.equal((await read(url)).extensions[0].parameters.serverUrl, 'https://elsewhere.example.net/orders');
    });

    it('PATCH null on a nullable field clears it (telephoneNumberId: null unassigns the number), and If-Match still guards', async () => {
      const url = items.agent as string;
      const etag = (await t.call('GET', url)).headers.etag as string;
      assert.ok((await read(url)).telephoneNumberId);
      const stale = await patch(url, { telephoneNumberId: null }, { ...MERGE_PATCH, 'if-match': '"00000000-1"' });
      assert.equal(stale.statusCode, 412);
      const res = await patch(url, { telephoneNumberId: null, systemPrompt: null }, { ...MERGE_PATCH, 'if-match': etag });
      assert.equal(res.statusCode, 200, res.body);
      const after = await read(url);
      assert.equal(after.telephoneNumberId, null);
      assert.equal(after.systemPrompt, null);
    });

    it('PATCH of SIP credentials: a new host needs the password again, a new name does not', async () => {
      const url = items.credential as string;
      assert.equal((await patch(url, { name: 'Main trunk', maxAgentTasks: 3 })).statusCode, 200);
      const moved = await patch(url, { hostname: 'sip.elsewhere.example' });
      assert.deepEqual([moved.statusCode, paths(moved.body)], [400, ['password']]);
      assert.equal((await patch(url, { hostname: 'sip.elsewhere.example', password: 'fresh-secret' })).statusCode, 200);
      const after = await read(url);
      assert.deepEqual([after.name, after.maxAgentTasks, after.hostname, after.password], ['Main trunk', 3, 'sip.elsewhere.example', undefined]);
    });

    it('PATCH of a SIP number normalises the number as a create does', async () => {
      const res = await patch(items.number as string, { number: '+49 (30) 555-555' });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal((await read(items.number as string)).number, '+4930555555');
      const bad = await patch(items.number as string, { number: '030 123456' });
      assert.deepEqual([bad.statusCode, paths(bad.body)], [400, ['number']]);
    });

    it('PATCH on vendors and organizations needs the same permissions as PUT', async () => {
      assert.equal((await patch(items.vendor as string, { name: 'Acme Corp' })).statusCode, 200);
      assert.equal((await read(items.vendor as string)).name, 'Acme Corp');
      const viewer = await t.call('POST', `/api/v1/vendors/${a.vendorId}/api-tokens`, { body: { name: 'v', role: 'viewer' } });
      const token = viewer.json().data.token as string;
      const denied = await t.call('PATCH', items.organization as string, { body: { name: 'x' }, headers: MERGE_PATCH, token });
      assert.equal(denied.statusCode, 403);
      assert.equal((await t.call('PATCH', items.vendor as string, { body: { name: 'x' }, headers: MERGE_PATCH, token })).statusCode, 403);
    });
  });
}
