import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createApiToken, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { EGRESS_ENV, WHSEC, drain, enqueue, sourceWithHooks, startReceiver } from '../events/support.ts';
import { CALL_SID_RETENTION_MS, claimCallSid } from '../../src/modules/twilio/twilio.replays.ts';

const DAY = 86_400_000;
const DAYS = 30;
const RETENTION_DAYS = 7;

for (const dialect of DIALECTS) {
  describe(`tables that would only grow are swept (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    const clock = new ManualClock('2026-10-01T09:00:00Z');
    before(async () => {
      t = await buildTestApp(dialect, { ...EGRESS_ENV, PARLEY_DELIVERY_RETENTION_DAYS: String(RETENTION_DAYS), PARLEY_RATE_LIMIT_PER_MINUTE: '100' }, { clock });
      a = await createTenant(t);
      receiver = await startReceiver();
    });
    after(async () => {
      await receiver.close();
      await t.close();
    });

    const count = async (table: 'rate_limit_windows' | 'idempotency_keys' | 'webhook_deliveries' | 'webhook_delivery_attempts' | 'calls') =>
      Number((await t.db.kysely.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

    it(`after ${DAYS} simulated days only what the retention keeps is left`, { timeout: 120_000 }, async () => {
      const token = await createApiToken(t, a.vendorId, { role: 'admin' });
      const source = await sourceWithHooks(t, a, [{ type: 'call_ended', url: `${receiver.url}/ok`, secret: WHSEC }]);
      const assistant = (await t.call('POST', `${a.orgPath}/assistants`, { body: { name: 'Sweepable' } })).json().data.id;
      for (let day = 0; day < DAYS; day++) {
        // A day's traffic: rate-limited reads, an idempotent create, a delivered event, a call nobody connects to.
        for (let i = 0; i < 3; i++) assert.equal((await t.call('GET', a.orgPath, { token })).statusCode, 200);
        const created = await t.call('POST', `${a.orgPath}/llm-generation-strategies`, {
          token, headers: { 'idempotency-key': `day-${day}` }, body: { name: `day ${day}`, type: 'text_to_speech', parameters: {} },
        });
        assert.equal(created.statusCode, 201);
        await enqueue(t, { organizationId: a.organizationId, sourceKind: 'assistant', sourceId: source.id, type: 'call_ended', payload: { callId: `day-${day}` } });
        await drain(t);
        assert.equal((await t.call('POST', `${a.orgPath}/assistants/${assistant}/calls`, { body: {} })).statusCode, 201);
        clock.advance(DAY);
        await t.app.runner.tick();
        await t.app.runner.idle();
      }
      await t.app.runner.sweepNow();

      // Rate-limit windows: only the current and the previous window may be left.
      assert.ok(await count('rate_limit_windows') <= 2, `${await count('rate_limit_windows')} rate-limit windows`);
      // Idempotency keys: kept 24 hours, so the last day's at most.
      assert.ok(await count('idempotency_keys') <= 1, `${await count('idempotency_keys')} idempotency keys`);
      // Deliveries (and their attempts): settled ones younger than the retention, and the list totals agree.
      const deliveries = await count('webhook_deliveries');
      assert.ok(deliveries >= RETENTION_DAYS - 1 && deliveries <= RETENTION_DAYS + 1, `${deliveries} deliveries kept`);
      assert.equal(await count('webhook_delivery_attempts'), deliveries, 'attempts went with their deliveries');
      const listed = await t.call('GET', `${a.orgPath}/webhook-deliveries`);
      assert.equal(listed.json().totalElements, deliveries, 'the list total (a kept counter) follows the sweep');
      assert.equal((await t.call('GET', `${a.orgPath}/webhook-deliveries?status=delivered`)).json().totalElements, deliveries);
      // Calls nobody connected to ended as not_connected; none is left ringing.
      const ringing = await t.db.kysely.selectFrom('calls').select('id').where('status', '!=', 'ended').execute();
      assert.deepEqual(ringing, []);
      assert.equal(await count('calls'), DAYS, 'call records are history: they stay');
    });

    it('Twilio CallSids are refused as replays for the whole retention, then swept', async () => {
      const claim = () => claimCallSid(t.db.kysely, a.organizationId, 'CA0123456789abcdef0123456789abcdef', clock.now());
      assert.equal(await claim(), true);
      assert.equal(await claim(), false, 'a replay');
      clock.advance(CALL_SID_RETENTION_MS - DAY);
      await t.app.runner.sweepNow();
      assert.equal(await claim(), false, 'still a replay a day before the retention ends');
      clock.advance(2 * DAY);
      await t.app.runner.sweepNow();
      const left = await t.db.kysely.selectFrom('twilio_call_sids').select('call_sid').execute();
      assert.deepEqual(left, [], 'swept once older than the retention');
    });
  });
}
