import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { hook, strategyBody, toolWebhook } from '../helpers/fixtures.ts';
import Fastify from 'fastify';
import { Envelope } from '../../src/http/envelope.ts';
import { Assistant } from '../../src/modules/assistants/assistants.schemas.ts';

/** What Fastify's serializer makes of `body` under the envelope schema of a read. */
async function serializedBySchema(body: unknown): Promise<string> {
  const app = Fastify();
  app.get('/', { schema: { response: { 200: Envelope(Assistant) } } }, async () => body);
  try {
    return (await app.inject({ method: 'GET', url: '/' })).body;
  } finally {
    await app.close();
  }
}

const MASK = '********';

for (const dialect of DIALECTS) {
  for (const plural of ['assistants', 'agents'] as const) {
    describe(`${plural}: create, read and the update rules (${dialect})`, () => {
      let t: TestApp;
      let a: Tenant;
      let url: string;
      let strategyId: string;
      before(async () => {
        t = await buildTestApp(dialect);
        a = await createTenant(t);
        url = `${a.orgPath}/${plural}`;
        strategyId = (await t.call('POST', `${a.orgPath}/llm-generation-strategies`, { body: strategyBody })).json().data.id;
      });
      after(() => t.close());

      const full = (overrides: Record<string, unknown> = {}) => ({
        name: 'Front desk',
        systemPrompt: 'You are the front desk of {{company}}.',
        systemPromptGreeting: 'Hello, how can I help?',
        llmAudioContentGenerationStrategyId: strategyId,
        extensions: [toolWebhook('lookup_order'), { type: 'transfer_call', parameters: { destination: '+4930123456' } }],
        callEventHooks: [hook('transcript_ready'), hook('call_ended', 'plain-secret')],
        ...overrides,
      });

      it('create answers 201, Location, ETag and the full resource with assigned ids; write-only values masked', async () => {
        const res = await t.call('POST', url, { body: full() });
        assert.equal(res.statusCode, 201, res.body);
        const data = res.json().data;
        assert.equal(res.headers.location, `${url}/${data.id}`);
        assert.ok(res.headers.etag);
        assert.equal(data.systemPrompt, 'You are the front desk of {{company}}.');
        assert.equal(data.llmAudioContentGenerationStrategyId, strategyId);
        assert.equal(data.telephoneNumberId, null);
        assert.equal(data.extensions.length, 2);
        for (const item of [...data.extensions, ...data.callEventHooks]) assert.match(item.id, /^[\da-f-]{36}$/);
        assert.equal(data.extensions[0].name, 'lookup_order');
        assert.deepEqual(data.extensions[0].parameters.headers, { Authorization: MASK });
        assert.deepEqual(data.extensions[1], { id: data.extensions[1].id, name: 'transfer_call', type: 'transfer_call', parameters: { destination: '+4930123456' } });
        assert.deepEqual(data.callEventHooks.map((h: any) => h.parameters.secret), [MASK, MASK]);
        const read = await t.call('GET', res.headers.location);
        assert.deepEqual(read.json().data, data);
        assert.equal(read.headers.etag, res.headers.etag);
      });

      it('a read is what the response schema serialises, and each write is seen by the next read', async () => {
        const created = (await t.call('POST', url, { body: full() })).json().data;
        const itemUrl = `${url}/${created.id}`;
        const first = await t.call('GET', itemUrl);
        assert.equal(first.headers['content-type'], 'application/json; charset=utf-8');
        assert.equal(first.body, await serializedBySchema(first.json()), 'byte for byte the schema serializer');
        assert.equal((await t.call('GET', itemUrl)).json().data.name, 'Front desk');
        assert.equal((await t.call('PUT', itemUrl, { body: full({ name: 'Renamed', extensions: [] }) })).statusCode, 200);
        const read = (await t.call('GET', itemUrl)).json().data;
        assert.deepEqual([read.name, read.extensions], ['Renamed', []]);
        // Each read carries its own trace id and time, kept or not.
        const again = await t.call('GET', itemUrl, { headers: { 'x-request-id': 'trace-two' } });
        assert.equal(again.json().traceId, 'trace-two');
        assert.equal(again.body, await serializedBySchema(again.json()));
      });

      it('create needs only a name; the rest reads as null or []', async () => {
        const res = await t.call('POST', url, { body: { name: 'Minimal' } });
        assert.equal(res.statusCode, 201);
        const data = res.json().data;
        assert.deepEqual([data.systemPrompt, data.systemPromptGreeting, data.llmAudioContentGenerationStrategyId, data.extensions, data.callEventHooks], [null, null, null, [], []]);
      });

      it('PUT: an existing id keeps its id and takes new values, a null id creates, an omitted item is removed', async () => {
        const created = (await t.call('POST', url, { body: full() })).json().data;
        const [webhook, transfer] = created.extensions;
        const [transcript] = created.callEventHooks;
        const body = full({
          name: 'Renamed',
          extensions: [
            { id: webhook.id, ...toolWebhook('lookup_order', { serverUrl: 'https://tools.example.com/v2', headers: { Authorization: MASK } }) },
            { id: null, ...toolWebhook('cancel_order') },
          ],
          callEventHooks: [{ id: transcript.id, ...hook('transcript_ready', MASK) }],
        });
        const put = await t.call('PUT', `${url}/${created.id}`, { body });
        assert.equal(put.statusCode, 200, put.body);
        assert.equal(put.json().data, null);
        const after = (await t.call('GET', `${url}/${created.id}`)).json().data;
        assert.equal(after.name, 'Renamed');
        assert.equal(after.extensions.length, 2);
        assert.equal(after.extensions[0].id, webhook.id, 'kept its id');
        assert.equal(after.extensions[0].parameters.serverUrl, 'https://tools.example.com/v2', 'took the new value');
        assert.notEqual(after.extensions[1].id, transfer.id);
        assert.equal(after.extensions[1].name, 'cancel_order');
        assert.ok(!after.extensions.some((e: any) => e.id === transfer.id), 'omitted item removed');
        assert.deepEqual(after.callEventHooks.map((h: any) => h.id), [transcript.id]);

        // The masked header kept the stored secret value.
        const row = await t.db.kysely.selectFrom('assistants').select(['extensions', 'call_event_hooks']).where('id', '=', created.id).executeTakeFirstOrThrow();
        const stored = typeof row.extensions === 'string' ? JSON.parse(row.extensions) : row.extensions;
        assert.equal(t.ctx.secrets.open(stored[0].parameters.headers.Authorization), 'Bearer webhook-token-lookup_order');
        const hooks = typeof row.call_event_hooks === 'string' ? JSON.parse(row.call_event_hooks) : row.call_event_hooks;
        assert.equal(t.ctx.secrets.open(hooks[0].secret), 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
      });

      it('PUT: an id that is not an item of this resource is a 400 and changes nothing', async () => {
        const first = (await t.call('POST', url, { body: full() })).json().data;
        const second = (await t.call('POST', url, { body: full({ name: 'Second' }) })).json().data;
        const foreign = { id: second.extensions[0].id, ...toolWebhook('lookup_order') };
        const res = await t.call('PUT', `${url}/${first.id}`, { body: full({ extensions: [foreign] }) });
        assert.equal(res.statusCode, 400);
        assert.deepEqual(res.json().error.details.map((d: any) => d.path), ['extensions[0].id']);
        const hookRes = await t.call('PUT', `${url}/${first.id}`, { body: full({ callEventHooks: [{ id: '00000000-0000-4000-8000-000000000000', ...hook() }] }) });
        assert.equal(hookRes.statusCode, 400);
        assert.equal(hookRes.json().error.details[0].path, 'callEventHooks[0].id');
        const twice = { id: first.extensions[0].id, ...toolWebhook('lookup_order') };
        const dup = await t.call('PUT', `${url}/${first.id}`, { body: full({ extensions: [twice, { ...twice, parameters: { ...twice.parameters, name: 'other', schema: JSON.stringify({ name: 'other', parameters: { type: 'object', properties: {} } }) } }] }) });
        assert.equal(dup.statusCode, 400);
        assert.equal((await t.call('GET', `${url}/${first.id}`)).json().data.name, 'Front desk');
      });

      it('PUT needs the fields the interface marks required', async () => {
        const created = (await t.call('POST', url, { body: full() })).json().data;
        const { extensions: _e, ...withoutExtensions } = full();
        const res = await t.call('PUT', `${url}/${created.id}`, { body: withoutExtensions });
        assert.equal(res.statusCode, 400);
        assert.deepEqual(res.json().error.details, [{ path: 'extensions', message: 'is required' }]);
      });

      it('ETag and If-Match: a stale ETag is a 412, the current one and none both work', async () => {
        const created = await t.call('POST', url, { body: full() });
        const itemUrl = created.headers.location as string;
        const etag = created.headers.etag as string;
        const body = full({ extensions: [], callEventHooks: [] });
        assert.equal((await t.call('PUT', itemUrl, { body, headers: { 'if-match': etag } })).statusCode, 200);
        const stale = await t.call('PUT', itemUrl, { body: { ...body, name: 'Lost' }, headers: { 'if-match': etag } });
        assert.equal(stale.statusCode, 412);
        assert.equal(stale.json().error.code, 'PRECONDITION_FAILED');
        const fresh = (await t.call('GET', itemUrl)).headers.etag as string;
        assert.notEqual(fresh, etag);
        assert.equal((await t.call('PUT', itemUrl, { body, headers: { 'if-match': fresh } })).statusCode, 200);
        assert.equal((await t.call('PUT', itemUrl, { body })).statusCode, 200);
        assert.equal((await t.call('GET', itemUrl)).json().data.name, 'Front desk');
      });

      it('references: a strategy of another organization, or none at all, is a 400', async () => {
        const other = await createTenant(t, 'Other');
        const foreign = (await t.call('POST', `${other.orgPath}/llm-generation-strategies`, { body: strategyBody })).json().data.id;
        for (const id of [foreign, '00000000-0000-4000-8000-000000000000']) {
          const res = await t.call('POST', url, { body: { name: 'x', llmAudioContentGenerationStrategyId: id } });
          assert.equal(res.statusCode, 400);
          assert.deepEqual(res.json().error.details.map((d: any) => d.path), ['llmAudioContentGenerationStrategyId']);
        }
      });

      it('404 for an unknown id, an id of another organization, and an id of the other kind', async () => {
        const other = await createTenant(t, 'Elsewhere');
        const foreign = (await t.call('POST', `${other.orgPath}/${plural}`, { body: { name: 'Theirs' } })).json().data.id;
        const otherKind = (await t.call('POST', `${a.orgPath}/${plural === 'agents' ? 'assistants' : 'agents'}`, { body: { name: 'Sibling' } })).json().data.id;
        for (const id of [foreign, otherKind, '00000000-0000-4000-8000-000000000000']) {
          assert.equal((await t.call('GET', `${url}/${id}`)).statusCode, 404);
          assert.equal((await t.call('PUT', `${url}/${id}`, { body: full() })).statusCode, 404);
          assert.equal((await t.call('DELETE', `${url}/${id}`)).statusCode, 404);
        }
        assert.equal((await t.call('GET', `${other.orgPath}/${plural}/${foreign}`)).json().data.name, 'Theirs');
      });

      it('lists only its own kind, paginated and sorted, with full items', async () => {
        const s = await createTenant(t, 'Lists');
        const surl = `${s.orgPath}/${plural}`;
        for (const name of ['delta', 'alpha', 'charlie', 'bravo', 'echo']) {
          assert.equal((await t.call('POST', surl, { body: { name, extensions: [toolWebhook('tool_' + name)] } })).statusCode, 201);
        }
        await t.call('POST', `${s.orgPath}/${plural === 'agents' ? 'assistants' : 'agents'}`, { body: { name: 'aaa other kind' } });
        const first = (await t.call('GET', `${surl}?size=2`)).json();
        assert.deepEqual(first.data.map((x: any) => x.name), ['alpha', 'bravo']);
        assert.deepEqual([first.totalElements, first.totalPages], [5, 3]);
        assert.deepEqual(first.data[0].extensions[0].parameters.headers, { Authorization: MASK });
        const last = (await t.call('GET', `${surl}?size=2&page=2`)).json();
        assert.deepEqual(last.data.map((x: any) => x.name), ['echo']);
        const desc = (await t.call('GET', `${surl}?sort=name,desc&size=3`)).json();
        assert.deepEqual(desc.data.map((x: any) => x.name), ['echo', 'delta', 'charlie']);
        const byCreated = (await t.call('GET', `${surl}?sort=createdAt,desc`)).json();
        const times = byCreated.data.map((x: any) => x.createdAt);
        assert.deepEqual(times, [...times].sort().reverse(), 'newest first (rows made in the same millisecond may tie)');
        assert.equal((await t.call('GET', `${surl}?sort=systemPrompt`)).statusCode, 400);
      });

      it('409 when deleting an organization that still has them', async () => {
        const res = await t.call('DELETE', a.orgPath);
        assert.equal(res.statusCode, 409);
      });
    });
  }
}
