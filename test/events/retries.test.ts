import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { EGRESS_ENV, WHSEC, deliveryRunner, drain, enqueue, putHooks, sourceWithHooks, startReceiver } from './support.ts';

const HOUR = 60 * 60_000;

for (const dialect of DIALECTS) {
  describe(`webhook retries (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    let clock: ManualClock;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    before(async () => {
      clock = new ManualClock('2026-11-18T10:00:00Z');
      t = await buildTestApp(dialect, EGRESS_ENV, { clock });
      a = await createTenant(t);
      receiver = await startReceiver();
    });
    after(async () => {
      await receiver.close();
      await t.close();
    });

    /**
     * A fresh source with one call_ended hook at `path`, and one event for it; returns the delivery.
     * Each case starts without the circuit history of the shared receiver (the clock moves back between cases).
     */
    async function oneDelivery(path: string) {
      await t.db.kysely.deleteFrom('webhook_endpoints').execute();
      const source = await sourceWithHooks(t, a, [{ type: 'call_ended', url: `${receiver.url}${path}`, secret: WHSEC }]);
      await enqueue(t, { organizationId: a.organizationId, sourceKind: 'assistant', sourceId: source.id, type: 'call_ended', payload: { callId: path } }, clock.now());
      const list = await t.call('GET', `${a.orgPath}/webhook-deliveries?hookId=${source.hookIds[0]}`);
      assert.equal(list.json().totalElements, 1);
      return { source, id: list.json().data[0].id as string };
    }
    const delivery = async (id: string) => (await t.call('GET', `${a.orgPath}/webhook-deliveries/${id}`)).json().data;
    const requestsTo = (path: string) => receiver.received.filter((r) => r.path === path);

    it('a failing receiver is retried with exponential backoff for at least 24 hours, then the delivery fails', async () => {
      clock.set('2026-11-18T10:00:00Z');
      receiver.decide = (_n, req) => (req.path === '/down' ? 500 : 200);
      const { id } = await oneDelivery('/down');
      const created = clock.now().getTime();

      assert.equal(await drain(t), 1);
      let d = await delivery(id);
      assert.deepEqual([d.status, d.attemptCount, d.lastStatusCode, d.lastError], ['pending', 1, 500, 'HTTP 500']);
      const first = Date.parse(d.nextAttemptAt) - created;
      assert.ok(first >= 4_000 && first <= 5_000, `first retry after 5 s less jitter, got ${first} ms`);
      clock.advance(3_000);
      assert.equal(await drain(t), 0, 'not before the backoff');

      clock.set(d.nextAttemptAt);
      assert.equal(await drain(t), 1);
      d = await delivery(id);
      const second = Date.parse(d.nextAttemptAt) - clock.now().getTime();
      assert.ok(second >= 8_000 && second <= 10_000, `then 10 s less jitter, got ${second} ms`);

      const times: number[] = [];
      while (d.status === 'pending') {
        clock.set(d.nextAttemptAt);
        times.push(clock.now().getTime());
        assert.equal(await drain(t), 1);
        d = await delivery(id);
      }
      assert.equal(d.status, 'failed');
      assert.equal(d.nextAttemptAt, null);
      const gaps = times.slice(1).map((at, i) => at - (times[i] as number));
      assert.ok(gaps.every((g) => g <= HOUR), 'the backoff is capped at one hour');
      assert.ok((times.at(-1) as number) >= created + 24 * HOUR, 'the last attempt is 24 hours or more after the event');
      assert.ok((times.at(-2) as number) < created + 24 * HOUR, 'and the one before it was inside the window');
      assert.ok(d.attemptCount >= 25 && d.attemptCount <= 40, `about 33 attempts in 24 h, got ${d.attemptCount}`);
      assert.equal(d.attempts.length, d.attemptCount);
      assert.ok(d.attempts.every((x: { statusCode: number; error: string }) => x.statusCode === 500 && x.error === 'HTTP 500'));
      assert.deepEqual(d.attempts.map((x: { attempt: number }) => x.attempt), d.attempts.map((_: unknown, i: number) => i + 1));

      const sent = requestsTo('/down');
      assert.equal(sent.length, d.attemptCount);
      assert.deepEqual(new Set(sent.map((r) => r.headers['webhook-id'])), new Set([id]), 'the same webhook-id on every retry');
      assert.equal(new Set(sent.map((r) => r.body)).size, 1, 'the same body on every retry');
      assert.equal(new Set(sent.map((r) => r.headers['x-request-id'])).size, sent.length, 'a new X-Request-Id per attempt');
      assert.equal(await drain(t), 0, 'a failed delivery is not tried again');
    });

    it('a receiver that recovers gets the delivery; it counts as delivered on the first 2xx', async () => {
      clock.set('2026-11-18T10:00:00Z');
      let failures = 3;
      receiver.decide = (_n, req) => (req.path === '/flaky' && failures-- > 0 ? 503 : 204);
      const { id } = await oneDelivery('/flaky');
      let d = await delivery(id);
      while (d.status === 'pending') {
        clock.set(d.nextAttemptAt ?? clock.now());
        await drain(t);
        d = await delivery(id);
      }
      assert.deepEqual([d.status, d.attemptCount, d.lastStatusCode, d.lastError], ['delivered', 4, 204, null]);
      assert.equal(d.deliveredAt, clock.now().toISOString());
      assert.deepEqual(d.attempts.map((x: { statusCode: number }) => x.statusCode), [503, 503, 503, 204]);
      assert.ok(d.attempts.every((x: { latencyMs: number }) => Number.isInteger(x.latencyMs) && x.latencyMs >= 0));
    });

    it('a 3xx is a failure and its Location is not followed', async () => {
      clock.set('2026-11-18T10:00:00Z');
      receiver.decide = (_n, req) => (req.path === '/redirect' ? 302 : 200);
      const { id } = await oneDelivery('/redirect');
      await drain(t);
      const d = await delivery(id);
      assert.deepEqual([d.status, d.lastStatusCode], ['pending', 302]);
      assert.match(d.lastError, /redirects are not followed/);
      assert.equal(requestsTo('/redirect').length, 1);
      assert.equal(requestsTo('/moved').length, 0, 'the Location was never requested');
    });

    it('a receiver that does not answer in time is a failed attempt without a status code', async () => {
      clock.set('2026-11-18T10:00:00Z');
      receiver.decide = (_n, req) => (req.path === '/slow' ? new Promise((resolve) => setTimeout(() => resolve(200), 1_000)) : 200);
      const { id } = await oneDelivery('/slow');
      // The app's deliverer waits 10 s; one with a short timeout shows the same path quickly.
      const quick = deliveryRunner(t, { timeoutMs: 200 });
      assert.equal((await quick.tick()).claimed.webhook_delivery, 1);
      await quick.idle();
      await quick.stop();
      await quick.closeEgress();
      const d = await delivery(id);
      assert.deepEqual([d.status, d.lastStatusCode, d.attemptCount], ['pending', null, 1]);
      assert.match(d.lastError, /timed out after 200ms/);
      assert.ok(d.lastLatencyMs >= 150);
    });

    it('an address outside the egress allow list is a failed attempt, not a request', async () => {
      clock.set('2026-11-18T10:00:00Z');
      const strict = deliveryRunner(t, { allow: '' });
      const { id } = await oneDelivery('/refused');
      await strict.tick();
      await strict.idle();
      await strict.stop();
      await strict.closeEgress();
      const d = await delivery(id);
      assert.deepEqual([d.status, d.lastStatusCode], ['pending', null]);
      assert.match(d.lastError, /refused/);
      assert.equal(requestsTo('/refused').length, 0);
    });

    it('a delivery whose hook was removed fails without a request', async () => {
      clock.set('2026-11-18T10:00:00Z');
      const { source, id } = await oneDelivery('/removed');
      await putHooks(t, source.url, []);
      await drain(t);
      const d = await delivery(id);
      assert.deepEqual([d.status, d.lastError, d.attemptCount], ['failed', 'the hook no longer exists', 0]);
      assert.equal(requestsTo('/removed').length, 0);
    });

    it('an attempt whose worker died is logged as lost once its lease expires, and sent again', async () => {
      clock.set('2026-11-18T10:00:00Z');
      receiver.decide = () => 200;
      const { id } = await oneDelivery('/orphan');
      // What a worker killed mid-request leaves behind.
      await t.db.kysely.updateTable('webhook_deliveries')
        .set({ lease_owner: 'dead-worker', lease_expires_at: '2026-11-18T10:01:00.000Z', next_attempt_at: null, updated_at: '2026-11-18T10:00:00.000Z' })
        .where('id', '=', id).execute();
      assert.equal(await drain(t), 0, 'the lease still holds');
      assert.equal((await delivery(id)).inFlight, true);
      clock.set('2026-11-18T10:02:00Z');
      const result = await t.app.runner.tick();
      await t.app.runner.idle();
      assert.equal(result.reclaimed.webhook_delivery, 1);
      assert.ok((result.claimed.webhook_delivery ?? 0) >= 1);
      const d = await delivery(id);
      assert.deepEqual([d.status, d.attemptCount], ['delivered', 2]);
      assert.deepEqual(d.attempts.map((x: { error: string | null }) => x.error), [
        'the worker sending it stopped before the result was recorded (lease expired)', null,
      ]);
      assert.equal(d.attempts[0].at, '2026-11-18T10:00:00.000Z', 'the lost attempt is dated when it was claimed');
    });
  });
}
