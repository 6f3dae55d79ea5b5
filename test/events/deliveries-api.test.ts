import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createApiToken, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { EGRESS_ENV, WHSEC, drain, enqueue, sourceWithHooks, startReceiver } from './support.ts';

for (const dialect of DIALECTS) {
  describe(`webhook delivery log API (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    let clock: ManualClock;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let agent: Awaited<ReturnType<typeof sourceWithHooks>>;
    let assistant: Awaited<ReturnType<typeof sourceWithHooks>>;
    let base: string;

    before(async () => {
      clock = new ManualClock('2026-11-18T10:00:00Z');
      t = await buildTestApp(dialect, EGRESS_ENV, { clock });
      a = await createTenant(t);
      base = `${a.orgPath}/webhook-deliveries`;
      receiver = await startReceiver();
      assistant = await sourceWithHooks(t, a, [
        { type: 'call_started', url: `${receiver.url}/started`, secret: WHSEC },
        { type: 'call_ended', url: `${receiver.url}/ended`, secret: WHSEC },
      ]);
      agent = await sourceWithHooks(t, a, [{ type: 'task_status_changed', url: `${receiver.url}/tasks`, secret: 'plain' }], 'agents');
      for (let i = 0; i < 3; i++) {
        await enqueue(t, { organizationId: a.organizationId, sourceKind: 'assistant', sourceId: assistant.id, type: 'call_started', payload: { callId: `c${i}` } }, clock.now());
        clock.advance(1_000);
      }
      await enqueue(t, { organizationId: a.organizationId, sourceKind: 'agent', sourceId: agent.id, type: 'task_status_changed', payload: { taskId: 't1', status: 'COMPLETED' } }, clock.now());
      receiver.decide = (_n, req) => (req.path === '/started' ? 200 : 500);
      await drain(t);
    });
    after(async () => {
      await receiver.close();
      await t.close();
    });

    it('lists newest first, with filters by status, hookId and eventType and their totals', async () => {
      const all = (await t.call('GET', base)).json();
      assert.equal(all.totalElements, 4);
      assert.deepEqual(all.data.map((d: { eventType: string }) => d.eventType), ['task_status_changed', 'call_started', 'call_started', 'call_started']);
      const [task] = all.data;
      assert.deepEqual([task.sourceKind, task.sourceId, task.hookId, task.payload], ['agent', agent.id, agent.hookIds[0], { taskId: 't1', status: 'COMPLETED' }]);
      assert.deepEqual([task.status, task.attemptCount, task.lastStatusCode, task.inFlight], ['pending', 1, 500, false]);

      const delivered = (await t.call('GET', `${base}?status=delivered&sort=createdAt,asc`)).json();
      assert.equal(delivered.totalElements, 3);
      assert.deepEqual(delivered.data.map((d: { payload: { callId: string } }) => d.payload.callId), ['c0', 'c1', 'c2']);
      assert.ok(delivered.data.every((d: { deliveredAt: string; lastLatencyMs: number }) => d.deliveredAt && d.lastLatencyMs >= 0));
      assert.equal((await t.call('GET', `${base}?hookId=${assistant.hookIds[0]}`)).json().totalElements, 3);
      const upper = (await t.call('GET', `${base}?hookId=${(assistant.hookIds[0] as string).toUpperCase()}`)).json();
      assert.deepEqual([upper.totalElements, upper.data.length], [3, 3]);
      assert.equal((await t.call('GET', `${base}?hookId=${assistant.hookIds[1]}`)).json().totalElements, 0);
      assert.equal((await t.call('GET', `${base}?eventType=task_status_changed`)).json().totalElements, 1);
      assert.equal((await t.call('GET', `${base}?eventType=task_status_changed&status=pending`)).json().totalElements, 1);
      assert.equal((await t.call('GET', `${base}?eventType=call_started&status=pending`)).json().totalElements, 0);
      const page = (await t.call('GET', `${base}?size=2&page=1`)).json();
      assert.deepEqual([page.data.length, page.totalPages], [2, 2]);
    });

    it('refuses unknown filters, values and malformed ids with 400; a delivery of another organization is 404', async () => {
      for (const query of ['status=sent', 'eventType=call_paused', 'hookId=nope', 'colour=red', 'sort=name,asc']) {
        assert.equal((await t.call('GET', `${base}?${query}`)).statusCode, 400, query);
      }
      assert.equal((await t.call('GET', `${base}/00000000-0000-4000-8000-000000000000`)).statusCode, 400);
      const id = (await t.call('GET', base)).json().data[0].id;
      const other = await createTenant(t, 'Other');
      assert.equal((await t.call('GET', `${other.orgPath}/webhook-deliveries/${id}`)).statusCode, 404);
      assert.equal((await t.call('POST', `${other.orgPath}/webhook-deliveries/${id}/redeliver`)).statusCode, 404);
      assert.equal((await t.call('GET', `${base}/msg_00000000-0000-4000-8000-000000000000`)).json().error.code, 'NOT_FOUND');
    });

    it('reading needs calls:read, redelivering calls:write', async () => {
      const id = (await t.call('GET', base)).json().data[0].id;
      const viewer = await createApiToken(t, a.vendorId, { role: 'viewer', organizationId: a.organizationId });
      assert.equal((await t.call('GET', `${base}/${id}`, { token: viewer })).statusCode, 200);
      assert.equal((await t.call('POST', `${base}/${id}/redeliver`, { token: viewer })).statusCode, 403);
      const noCalls = await createApiToken(t, a.vendorId, { permissions: ['assistants:read'] });
      assert.equal((await t.call('GET', base, { token: noCalls })).statusCode, 403);
    });

    it('redeliver: 409 while an attempt is in flight; then pending now, the same webhook-id, sent again', async () => {
      const task = (await t.call('GET', `${base}?eventType=task_status_changed`)).json().data[0];
      // The receiver holds the request until told how to answer.
      const held = new Promise<(status: number) => void>((gotRequest) => {
        receiver.decide = () => new Promise<number>((answer) => gotRequest(answer));
      });
      const before = receiver.received.length;
      clock.set(task.nextAttemptAt);
      assert.equal((await t.app.runner.tick()).claimed.webhook_delivery, 1);
      const release = await held;
      const inFlight = (await t.call('GET', `${base}/${task.id}`)).json().data;
      assert.deepEqual([inFlight.inFlight, inFlight.nextAttemptAt], [true, null]);
      const refused = await t.call('POST', `${base}/${task.id}/redeliver`);
      assert.equal(refused.statusCode, 409);
      assert.equal(refused.json().error.code, 'CONFLICT');
      release(500);
      await t.app.runner.idle();

      const res = await t.call('POST', `${base}/${task.id}/redeliver`);
      assert.equal(res.statusCode, 200, res.body);
      const data = res.json().data;
      assert.deepEqual([data.id, data.status, data.nextAttemptAt, data.inFlight], [task.id, 'pending', clock.now().toISOString(), false]);
      assert.equal(Date.parse(data.retryUntil) - clock.now().getTime(), 24 * 60 * 60_000, 'a fresh 24-hour retry window');
      receiver.decide = () => 200;
      await drain(t);
      const detail = (await t.call('GET', `${base}/${task.id}`)).json().data;
      assert.equal(detail.status, 'delivered');
      assert.deepEqual(detail.attempts.map((x: { attempt: number; statusCode: number }) => [x.attempt, x.statusCode]), [[1, 500], [2, 500], [3, 200]]);
      assert.ok(detail.attempts.every((x: { at: string; latencyMs: number }) => x.at && Number.isInteger(x.latencyMs)));
      const sent = receiver.received.slice(before);
      assert.deepEqual(sent.map((r) => r.headers['webhook-id']), [task.id, task.id]);

      // A delivered one can be sent again too; the counters follow the status.
      const again = await t.call('POST', `${base}/${task.id}/redeliver`);
      assert.equal(again.statusCode, 200);
      assert.equal((await t.call('GET', `${base}?status=pending`)).json().totalElements, 1);
      assert.equal((await t.call('GET', `${base}?status=delivered`)).json().totalElements, 3);
      await drain(t);
      assert.equal((await t.call('GET', `${base}?status=delivered`)).json().totalElements, 4);
    });

    it('redeliver of a delivery whose hook was removed is a 409', async () => {
      const id = (await t.call('GET', `${base}?eventType=call_started`)).json().data[0].id;
      const put = await t.call('PUT', assistant.url, {
        body: { name: 'Front desk', systemPrompt: null, systemPromptGreeting: null, llmAudioContentGenerationStrategyId: null, extensions: [], callEventHooks: [] },
      });
      assert.equal(put.statusCode, 200, put.body);
      const res = await t.call('POST', `${base}/${id}/redeliver`);
      assert.equal(res.statusCode, 409);
      assert.match(res.json().message, /no longer exists/);
    });

    it('deleting an organization deletes its deliveries and their attempts', async () => {
      const other = await createTenant(t, 'Leaving');
      const source = await sourceWithHooks(t, other, [{ type: 'call_ended', url: `${receiver.url}/leaving`, secret: WHSEC }]);
      await enqueue(t, { organizationId: other.organizationId, sourceKind: 'assistant', sourceId: source.id, type: 'call_ended', payload: {} }, clock.now());
      await drain(t);
      const id = (await t.call('GET', `${other.orgPath}/webhook-deliveries`)).json().data[0].id;
      assert.equal((await t.call('DELETE', source.url)).statusCode, 200);
      const deleted = await t.call('DELETE', other.orgPath);
      assert.equal(deleted.statusCode, 200, deleted.body);
      assert.equal((await t.db.kysely.selectFrom('webhook_deliveries').select('id').where('id', '=', id).execute()).length, 0);
      assert.equal((await t.db.kysely.selectFrom('webhook_delivery_attempts').select('attempt').where('delivery_id', '=', id).execute()).length, 0);
    });
  });
}
