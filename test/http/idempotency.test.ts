import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { strategyBody } from '../helpers/fixtures.ts';

for (const dialect of DIALECTS) {
  describe(`Idempotency-Key on POST creates (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    before(async () => {
      t = await buildTestApp(dialect);
      a = await createTenant(t);
    });
    after(() => t.close());

    const routes = () => [
      { url: '/api/v1/vendors', body: { name: 'Idem vendor' } },
      { url: `/api/v1/vendors/${a.vendorId}/organizations`, body: { name: 'Idem org' } },
      { url: `${a.orgPath}/llm-generation-strategies`, body: strategyBody },
      { url: `${a.orgPath}/assistants`, body: { name: 'Idem assistant' } },
      { url: `${a.orgPath}/agents`, body: { name: 'Idem agent' } },
      { url: `${a.orgPath}/sip/credentials`, body: { name: 'Idem trunk', hostname: 'sip.example.com', username: 'u', password: 'pw', maxAgentTasks: 1 } },
    ];

    it('a repeat answers the first 201 byte for byte and creates nothing; another body is a 422', async () => {
      for (const [i, { url, body }] of routes().entries()) {
        const headers = { 'idempotency-key': `key-${i}` };
        const count = async () => (await t.call('GET', url.replace(/\/organizations$/, '/organizations'))).json().totalElements;
        const before = await count();
        const first = await t.call('POST', url, { body, headers });
        assert.equal(first.statusCode, 201, `${url}: ${first.body}`);
        const again = await t.call('POST', url, { body, headers });
        assert.equal(again.statusCode, 201);
        assert.equal(again.body, first.body, url);
        assert.equal(again.headers.location, first.headers.location);
        assert.equal(await count(), before + 1, url);
        const other = await t.call('POST', url, { body: { ...body, name: 'Something else' }, headers });
        assert.equal(other.statusCode, 422, url);
        assert.equal(other.json().error.code, 'IDEMPOTENCY_KEY_REUSED');
      }
    });

    it('a replayed call start gives the same call, and its token is kept sealed', async () => {
      const assistant = (await t.call('POST', `${a.orgPath}/assistants`, { body: { name: 'Caller' } })).json().data.id;
      const headers = { 'idempotency-key': 'call-once' };
      const first = await t.call('POST', `${a.orgPath}/assistants/${assistant}/calls`, { body: {}, headers });
      const again = await t.call('POST', `${a.orgPath}/assistants/${assistant}/calls`, { body: {}, headers });
      assert.equal(first.statusCode, 201, first.body);
      assert.equal(again.body, first.body);
      const token = new URL(first.json().data.websocketUrl).searchParams.get('token') as string;
      const { rows } = await sql<Record<string, unknown>>`select * from idempotency_keys`.execute(t.db.kysely);
      assert.ok(!JSON.stringify(rows).includes(token), 'the call token is not stored in plain text');
      assert.equal((await t.call('GET', `${a.orgPath}/calls`)).json().totalElements, 1);
    });

    it('keys are per organization: the same key in another organization is a new request', async () => {
      const b = await createTenant(t, 'Other');
      const headers = { 'idempotency-key': 'shared-key' };
      const one = await t.call('POST', `${a.orgPath}/assistants`, { body: { name: 'x' }, headers });
      const two = await t.call('POST', `${b.orgPath}/assistants`, { body: { name: 'x' }, headers });
      assert.equal(one.statusCode, 201);
      assert.equal(two.statusCode, 201);
      assert.notEqual(one.json().data.id, two.json().data.id);
    });

    it('a replayed token create shows the same token, which is stored sealed, not in plain text', async () => {
      const headers = { 'idempotency-key': 'token-once' };
      const body = { name: 'ci', role: 'viewer' };
      const first = await t.call('POST', `/api/v1/vendors/${a.vendorId}/api-tokens`, { body, headers });
      const again = await t.call('POST', `/api/v1/vendors/${a.vendorId}/api-tokens`, { body, headers });
      assert.equal(again.json().data.token, first.json().data.token);
      const { rows } = await sql<Record<string, unknown>>`select * from idempotency_keys`.execute(t.db.kysely);
      const dump = JSON.stringify(rows);
      assert.ok(!dump.includes(first.json().data.token.slice('prl_'.length + 13)), 'the token secret is not stored in plain text');
      assert.equal((await t.call('GET', `/api/v1/vendors/${a.vendorId}/api-tokens?size=100`)).json().data.filter((x: any) => x.name === 'ci').length, 1);
    });
  });
}
