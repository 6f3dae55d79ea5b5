import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.ts';
import { createApiToken, createTenant } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { connect } from './support/client.ts';
import { callRecord, startWorld, type World } from './support/world.ts';

const UUID = /^[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}$/;

for (const dialect of DIALECTS) {
  describe(`calls: start, token and records (${dialect})`, () => {
    let w: World;
    let assistantId: string;
    const clock = new ManualClock('2026-03-02T10:00:00.000Z');
    before(async () => {
      w = await startWorld(dialect, {}, { clock });
      assistantId = await w.createAssistant({ name: 'Front desk', systemPromptGreeting: 'Hello.' });
    });
    after(() => w.close());

    it('answers 201 with the call id, a websocketUrl carrying a token, and when it expires', async () => {
      const res = await w.api('POST', `${w.tenant.orgPath}/assistants/${assistantId}/calls`, { userValues: { firstName: 'Ada' } });
      assert.equal(res.status, 201);
      const { id, websocketUrl, expiresAt } = res.body.data;
      assert.match(id, UUID);
      const url = new URL(websocketUrl);
      assert.equal(url.protocol, 'ws:');
      assert.equal(url.host, new URL(w.address).host);
      assert.equal(url.pathname, `/api/v1/calls/${id}/ws`);
      assert.ok((url.searchParams.get('token') ?? '').length >= 40);
      assert.equal(expiresAt, new Date(clock.now().getTime() + 60_000).toISOString());
      assert.equal(res.headers.get('location'), `${w.tenant.orgPath}/calls/${id}`);
      const row = await w.t.db.kysely.selectFrom('calls').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      assert.equal(row.status, 'ringing');
      assert.notEqual(row.token_hash, url.searchParams.get('token'), 'only a hash of the token is stored');
      assert.ok(!JSON.stringify(row).includes(url.searchParams.get('token') ?? '-'));
      const record = (await w.api('GET', `${w.tenant.orgPath}/calls/${id}`)).body.data;
      assert.deepEqual([record.userValues, record.assistantId, record.agentId, record.taskId], [{ firstName: 'Ada' }, assistantId, null, null], 'the record carries the values the call started with');
    });

    it('refuses without a token (401), with a viewer token (403), for a foreign or unknown assistant (404), and unknown fields (400)', async () => {
      const path = `${w.tenant.orgPath}/assistants/${assistantId}/calls`;
      assert.equal((await w.t.call('POST', path, { token: null, body: {} })).statusCode, 401);
      const viewer = await createApiToken(w.t, w.tenant.vendorId, { role: 'viewer' });
      const forbidden = await w.t.call('POST', path, { token: viewer, body: {} });
      assert.equal(forbidden.statusCode, 403);
      assert.equal(forbidden.json().error.code, 'FORBIDDEN');
      const other = await createTenant(w.t, 'Other');
      assert.equal((await w.t.call('POST', `${other.orgPath}/assistants/${assistantId}/calls`, { body: {} })).statusCode, 404);
      assert.equal((await w.t.call('POST', `${w.tenant.orgPath}/agents/${assistantId}/calls`, { body: {} })).statusCode, 404, 'an assistant is not an agent');
      assert.equal((await w.t.call('POST', `${w.tenant.orgPath}/assistants/${crypto.randomUUID()}/calls`, { body: {} })).statusCode, 404);
      const extra = await w.t.call('POST', path, { body: { userValues: {}, dial: true } });
      assert.equal(extra.statusCode, 400);
      assert.equal(extra.json().error.details[0].path, 'dial');
    });

    it('uses PARLEY_PUBLIC_URL for the websocketUrl when set', async () => {
      const other = await startWorld(dialect, { PARLEY_PUBLIC_URL: 'https://parley.example.com/' });
      try {
        const id = await other.createAssistant({ name: 'A' });
        const call = await other.startCall(id);
        assert.match(call.websocketUrl, new RegExp(`^wss://parley\\.example\\.com/api/v1/calls/${call.id}/ws\\?token=[\\w-]+$`));
      } finally {
        await other.close();
      }
    });

    it('refuses a second use of the token, and an expired one, before any upgrade', async () => {
      const call = await w.startCall(assistantId);
      const client = await connect(call.websocketUrl);
      await client.next('call_started');
      await assert.rejects(connect(call.websocketUrl), { statusCode: 401 });
      client.send({ type: 'end' });
      await client.closed;
      await assert.rejects(connect(call.websocketUrl), { statusCode: 401 }, 'not after the call either');

      const late = await w.startCall(assistantId);
      clock.advance(60_001);
      await assert.rejects(connect(late.websocketUrl), { statusCode: 401 });
      assert.equal((await callRecord(w, late.id)).status, 'ringing', 'a refused connect writes nothing');
      await w.t.app.runner.sweepNow();
      const record = await callRecord(w, late.id);
      assert.equal(record.status, 'ended');
      assert.equal(record.endReason, 'not_connected');
      assert.equal(record.conclusion.outcome, 'abandoned');
      const wrong = await w.startCall(assistantId);
      await assert.rejects(connect(wrong.websocketUrl.replace(/token=.*/, 'token=nope')), { statusCode: 401 });
      await assert.rejects(connect(wrong.websocketUrl.replace(/\?token=.*/, '')), { statusCode: 400 });
      assert.equal((await callRecord(w, wrong.id)).status, 'ringing', 'a wrong token does not spend the right one');
    });

    it('lists calls with filters, totals from counters, newest first', async () => {
      const agentId = await w.createAssistant({ name: 'Dialer' }, 'agents');
      clock.advance(1000);
      const agentCall = await w.api('POST', `${w.tenant.orgPath}/agents/${agentId}/calls`, {});
      assert.equal(agentCall.status, 201);
      const all = await w.api('GET', `${w.tenant.orgPath}/calls`);
      assert.equal(all.status, 200);
      assert.equal(all.body.totalElements, all.body.data.length);
      assert.equal(all.body.data[0].id, agentCall.body.data.id, 'newest first by default');
      assert.equal(all.body.data[0].agentId, agentId);
      assert.equal(all.body.data[0].assistantId, null);
      const byAgent = await w.api('GET', `${w.tenant.orgPath}/calls?agentId=${agentId}`);
      assert.deepEqual(byAgent.body.data.map((c: any) => c.id), [agentCall.body.data.id]);
      assert.equal(byAgent.body.totalElements, 1);
      const byAssistant = await w.api('GET', `${w.tenant.orgPath}/calls?assistantId=${assistantId}&sort=createdAt,asc`);
      assert.equal(byAssistant.body.totalElements, all.body.totalElements - 1);
      assert.ok(byAssistant.body.data.every((c: any) => c.assistantId === assistantId));
      for (const status of ['ringing', 'active', 'ended']) {
        const page = await w.api('GET', `${w.tenant.orgPath}/calls?status=${status}&assistantId=${assistantId}&size=100`);
        assert.equal(page.body.totalElements, page.body.data.length, `${status} counter matches rows`);
        assert.ok(page.body.data.every((c: any) => c.status === status));
      }
      assert.equal((await w.api('GET', `${w.tenant.orgPath}/calls?assistantId=${assistantId}&agentId=${agentId}`)).status, 400);
      assert.equal((await w.api('GET', `${w.tenant.orgPath}/calls?status=busy`)).status, 400);
      const viewer = await createApiToken(w.t, w.tenant.vendorId, { role: 'viewer' });
      assert.equal((await w.t.call('GET', `${w.tenant.orgPath}/calls`, { token: viewer })).statusCode, 200);
      assert.equal((await w.api('GET', `${w.tenant.orgPath}/calls/${crypto.randomUUID()}`)).status, 404);
    });

    it('blocks deleting an assistant while its call rings, keeps the record afterwards', async () => {
      const id = await w.createAssistant({ name: 'Short lived' });
      const call = await w.startCall(id);
      assert.equal((await w.api('DELETE', `${w.tenant.orgPath}/assistants/${id}`)).status, 409);
      const client = await connect(call.websocketUrl);
      await client.next('call_started');
      client.send({ type: 'end' });
      await client.closed;
      assert.equal((await w.api('DELETE', `${w.tenant.orgPath}/assistants/${id}`)).status, 200);
      assert.equal((await callRecord(w, call.id)).assistantId, id);
    });

    it('never logs the call token', () => {
      assert.ok(w.logs().length > 0);
      assert.doesNotMatch(w.logs(), /token=(?!\[Redacted\])[\w-]{10,}/);
    });
  });
}
