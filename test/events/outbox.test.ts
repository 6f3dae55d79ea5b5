import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ManualClock } from '../../src/clock.ts';
import { enqueueEvent } from '../../src/modules/events/outbox.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createTenant, type TestApp } from '../helpers/app.ts';
import { EGRESS_ENV, WHSEC, deliveryRunner, drain, enqueue, signedWith, sourceWithHooks, startReceiver, type Received } from './support.ts';

const HOUR = 60 * 60_000;
const EVENTS = 500;

const callIdOf = (r: Received) => (JSON.parse(r.body) as { data: { callId: string } }).data.callId;

for (const dialect of DIALECTS) {
  describe(`the outbox (${dialect})`, () => {
    it(`${EVENTS} call-end events reach a receiver failing every other request, across two restarts`, async (ctx) => {
      const clock = new ManualClock(new Date());
      let t: TestApp = await buildTestApp(dialect, EGRESS_ENV, { clock });
      // Every other request fails; every 17th is slow, and all are while an abrupt restart is
      // under way, so that it finds some in flight.
      let slow = false;
      const receiver = await startReceiver(async (n) => {
        if (slow || n % 17 === 0) await sleep(300);
        return n % 2 === 1 ? 500 : 200;
      });
      try {
        const a = await createTenant(t);
        const source = await sourceWithHooks(t, a, [{ type: 'call_ended', url: `${receiver.url}/events`, secret: WHSEC }]);
        const hookId = source.hookIds[0] as string;
        const event = (callId: string) =>
          ({ organizationId: a.organizationId, sourceKind: 'assistant', sourceId: source.id, type: 'call_ended', payload: { callId, endedReason: 'customer_hangup' } }) as const;
        const callIds: string[] = [];
        /** Call ends committed ten to a transaction, each event enqueued inside it. */
        const endCalls = async (count: number) => {
          for (let i = 0; i < count; i += 10) {
            await t.db.kysely.transaction().execute(async (trx) => {
              for (let j = 0; j < 10; j++) {
                const callId = randomUUID();
                await enqueueEvent(trx, event(callId), clock.now());
                callIds.push(callId);
              }
            });
          }
        };
        const list = async (query: string) => {
          const res = await t.call('GET', `${a.orgPath}/webhook-deliveries?${query}`);
          assert.equal(res.statusCode, 200, res.body);
          return res.json();
        };
        /** Everything due now, then an hour later: past every backoff (capped at one hour) and every lease. */
        const round = async () => {
          await drain(t);
          clock.advance(HOUR);
        };
        const restart = async (abrupt: boolean) => {
          if (abrupt) {
            // Requests in flight are cut off unrecorded, as when a process dies: their leases bring them back.
            slow = true;
            await t.app.runner.tick();
            await sleep(100);
            assert.ok(t.app.runner.running('webhook_delivery') > 0, 'the restart finds requests in flight');
            await t.app.runner.stop(0);
            slow = false;
          }
          await t.app.close();
          await t.db.close();
          t = await buildTestApp(dialect, EGRESS_ENV, { clock, reuse: t });
        };

        await assert.rejects(t.db.kysely.transaction().execute(async (trx) => {
          await enqueueEvent(trx, event('rolled-back'), clock.now());
          throw new Error('the call end did not commit');
        }));

        await endCalls(200);
        await round();
        await round();
        await restart(true);
        await endCalls(150);
        await round();
        await restart(false);
        await endCalls(150);
        for (let i = 0; i < 20 && (await list('status=pending')).totalElements > 0; i++) await round();

        // Every event arrived with a 2xx at least once; duplicates carry the same webhook-id.
        assert.equal(callIds.length, EVENTS);
        const ok = new Set(receiver.received.filter((r) => r.status >= 200 && r.status < 300).map(callIdOf));
        assert.deepEqual(callIds.filter((id) => !ok.has(id)), [], 'every event was delivered');
        assert.ok(!receiver.received.some((r) => callIdOf(r) === 'rolled-back'), 'a rolled-back event is never sent');
        const webhookIds = new Map<string, Set<string>>();
        for (const r of receiver.received) {
          const ids = webhookIds.get(callIdOf(r)) ?? new Set<string>();
          ids.add(String(r.headers['webhook-id']));
          webhookIds.set(callIdOf(r), ids);
        }
        assert.ok([...webhookIds.values()].every((ids) => ids.size === 1), 'one webhook-id per event, on every request');
        assert.equal(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size, EVENTS);
        assert.ok(receiver.received.every((r) => signedWith(WHSEC, r)), 'every request is signed');
        const okCount = receiver.received.filter((r) => r.status < 300).length;
        const failed = receiver.received.length - okCount;
        assert.ok(failed >= EVENTS / 2, `the receiver failed ${failed} requests`);

        // The delivery log: every delivery delivered, its attempts and status codes recorded.
        assert.equal((await list('status=delivered')).totalElements, EVENTS);
        assert.equal((await list('status=pending')).totalElements, 0);
        assert.equal((await list('status=failed')).totalElements, 0);
        assert.equal((await list('')).totalElements, EVENTS);
        assert.equal((await list(`hookId=${hookId}&eventType=call_ended&status=delivered`)).totalElements, EVENTS);
        const rows = await t.db.kysely.selectFrom('webhook_deliveries').selectAll().execute();
        const attempts = await t.db.kysely.selectFrom('webhook_delivery_attempts').selectAll().execute();
        assert.equal(attempts.length, rows.reduce((sum, r) => sum + r.attempts, 0), 'one log row per attempt');
        const answered = attempts.filter((x) => x.status_code !== null);
        assert.ok(answered.length <= receiver.received.length && answered.length >= receiver.received.length - 32,
          `${answered.length} recorded answers for ${receiver.received.length} requests (at most one batch cut off)`);
        const lost = attempts.filter((x) => x.status_code === null);
        assert.ok(lost.length > 0 && lost.every((x) => /lease expired/.test(x.error ?? '')), 'the cut-off attempts are logged as lost');
        const retried = rows.find((r) => r.attempts >= 2 && r.last_status_code === 200);
        assert.ok(retried);
        const detail = (await t.call('GET', `${a.orgPath}/webhook-deliveries/${retried.id}`)).json().data;
        assert.equal(detail.status, 'delivered');
        assert.equal(detail.attempts.length, retried.attempts);
        assert.equal(detail.attempts.at(-1).statusCode, 200);
        assert.ok(detail.attempts.slice(0, -1).every((x: { statusCode: number | null }) => x.statusCode === 500 || x.statusCode === null));
        ctx.diagnostic(`requests ${receiver.received.length}, failed ${failed}, attempts lost to the abrupt restart ${lost.length}, ` +
          `events delivered more than once ${receiver.received.filter((r) => r.status === 200).length - EVENTS}`);

        // Redeliver: pending again now, the same webhook-id, delivered again.
        const before = receiver.received.length;
        const res = await t.call('POST', `${a.orgPath}/webhook-deliveries/${retried.id}/redeliver`);
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual([res.json().data.status, res.json().data.nextAttemptAt], ['pending', clock.now().toISOString()]);
        for (let i = 0; i < 5 && (await list('status=pending')).totalElements > 0; i++) await round();
        const again = receiver.received.slice(before);
        assert.ok(again.length >= 1 && again.every((r) => r.headers['webhook-id'] === retried.id));
        assert.equal(again.at(-1)?.status, 200);
        assert.equal((await list('status=delivered')).totalElements, EVENTS);
      } finally {
        await receiver.close();
        await t.close();
      }
    });

    it('workers sharing one database claim each delivery once; a started worker works through a backlog without waiting to poll', async () => {
      const clock = new ManualClock(new Date());
      const t = await buildTestApp(dialect, EGRESS_ENV, { clock });
      const receiver = await startReceiver(async () => {
        await sleep(5);
        return 200;
      });
      const workers = [0, 1, 2].map(() => deliveryRunner(t, { pollMs: 60_000 }));
      try {
        const a = await createTenant(t);
        const source = await sourceWithHooks(t, a, [{ type: 'call_ended', url: `${receiver.url}/shared`, secret: WHSEC }]);
        const endCall = (callId: string) =>
          enqueue(t, { organizationId: a.organizationId, sourceKind: 'assistant', sourceId: source.id, type: 'call_ended', payload: { callId } }, clock.now());
        for (let i = 0; i < 150; i++) await endCall(`shared-${i}`);
        let claimed = 0;
        for (;;) {
          const results = await Promise.all(workers.map((w) => w.tick()));
          await Promise.all(workers.map((w) => w.idle()));
          const round = results.reduce((sum, r) => sum + (r.claimed.webhook_delivery ?? 0), 0);
          if (round === 0) break;
          claimed += round;
        }
        assert.equal(claimed, 150, 'each delivery claimed once');
        const ids = receiver.received.map((r) => r.headers['webhook-id']);
        assert.equal(ids.length, 150);
        assert.equal(new Set(ids).size, 150, 'no delivery sent twice');

        // One worker, started, with a poll interval far longer than the test: completions pull the next batch.
        for (let i = 0; i < 200; i++) await endCall(`backlog-${i}`);
        const [worker] = workers;
        assert.ok(worker);
        worker.start();
        const deadline = Date.now() + 20_000;
        while (receiver.received.length < 350 && Date.now() < deadline) await sleep(20);
        assert.equal(receiver.received.length, 350, 'the backlog was delivered without waiting for the next poll');
      } finally {
        await Promise.all(workers.map(async (w) => { await w.stop(); await w.closeEgress(); }));
        await receiver.close();
        await t.close();
      }
    });
  });
}
