/**
 * Issue 10, item 4: one tenant's webhook receiver that never answers, or always fails, must
 * not delay another tenant's deliveries; and a tenant cannot multiply deliveries with hooks.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ManualClock } from '../../src/clock.ts';
import { Runner } from '../../src/jobs/runner.ts';
import { CIRCUIT } from '../../src/modules/events/deliveries.circuit.ts';
import { DELIVERY_FAIRNESS, deliveryJobs } from '../../src/modules/events/deliveries.jobs.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { EGRESS_ENV, drain, enqueue, silentLog, sourceWithHooks, startReceiver } from '../events/support.ts';
import { waitFor } from './support.ts';

/** A receiver that holds every request open until told to answer (a server that never answers). */
async function startBlackHole() {
  const open = new Set<ServerResponse>();
  let arrived = 0;
  let abandoned = 0;
  const server = createServer((req, res) => {
    arrived++;
    open.add(res);
    res.on('close', () => {
      if (open.delete(res) && !res.writableEnded) abandoned++;
    });
    req.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrived: () => arrived,
    inFlight: () => open.size,
    /** Requests whose sender gave up before an answer came. */
    abandoned: () => abandoned,
    answerAll() {
      for (const res of open) res.writeHead(200).end();
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

for (const dialect of DIALECTS) {
  describe(`outbox fairness (${dialect})`, () => {
    let t: TestApp;
    let noisy: Tenant;
    let quiet: Tenant;
    const clock = new ManualClock('2026-11-18T10:00:00Z');
    before(async () => {
      t = await buildTestApp(dialect, EGRESS_ENV, { clock });
      noisy = await createTenant(t, 'Noisy');
      quiet = await createTenant(t, 'Quiet');
    });
    after(() => t.close());

    it(`a receiver that never answers holds at most ${DELIVERY_FAIRNESS.perEndpoint} deliveries; another tenant's go out at once`, async () => {
      const hole = await startBlackHole();
      const good = await startReceiver();
      // 8 slots in all: without the caps, the noisy tenant's 20 older deliveries would take every one.
      const runner = new Runner(clock, silentLog).register(deliveryJobs(t.ctx, { leaseMs: t.config.leaseMs, concurrency: 8 }));
      try {
        const hooks = Array.from({ length: 10 }, (_, i) => ({ type: 'call_ended', url: `${hole.url}/h${i}`, secret: 'noisy-secret' }));
        const noisySource = await sourceWithHooks(t, noisy, hooks);
        for (let i = 0; i < 2; i++) {
          await enqueue(t, { organizationId: noisy.organizationId, sourceKind: 'assistant', sourceId: noisySource.id, type: 'call_ended', payload: { callId: `n${i}` } }, clock.now());
        }
        clock.advance(1_000);
        const quietSource = await sourceWithHooks(t, quiet, [{ type: 'call_ended', url: `${good.url}/quiet`, secret: 'quiet-secret' }]);
        await enqueue(t, { organizationId: quiet.organizationId, sourceKind: 'assistant', sourceId: quietSource.id, type: 'call_ended', payload: { callId: 'q' } }, clock.now());

        await runner.tick();
        await waitFor('the quiet tenant\'s delivery', () => good.received.length === 1);
        await waitFor('the held requests to arrive', () => hole.inFlight() === DELIVERY_FAIRNESS.perEndpoint);
        // Delivered while every request to the dead receiver was still held, not after they timed out.
        assert.equal(hole.abandoned(), 0);
        await runner.tick();
        assert.equal(hole.arrived(), DELIVERY_FAIRNESS.perEndpoint, 'no more than the endpoint cap in flight');
      } finally {
        hole.answerAll();
        await runner.stop();
        await hole.close();
        await good.close();
      }
    });

    it(`a receiver failing ${CIRCUIT.threshold} times in a row has its circuit opened: its deliveries wait instead of taking slots`, async () => {
      const failing = await startReceiver(() => 500);
      try {
        const source = await sourceWithHooks(t, noisy, [{ type: 'call_started', url: `${failing.url}/fails`, secret: 'noisy-secret' }]);
        for (let i = 0; i < 12; i++) {
          await enqueue(t, { organizationId: noisy.organizationId, sourceKind: 'assistant', sourceId: source.id, type: 'call_started', payload: { callId: `f${i}` } }, clock.now());
        }
        await drain(t);
        const sent = failing.received.length;
        assert.ok(sent >= CIRCUIT.threshold && sent < 12, `${sent} requests before the circuit opened`);
        const count = async (status: string) => (await t.call('GET', `${noisy.orgPath}/webhook-deliveries?status=${status}&eventType=call_started`)).json().totalElements;
        assert.equal(await count('pending'), 12, 'every delivery is still pending, none lost');
        await drain(t);
        assert.equal(failing.received.length, sent, 'nothing is sent while the circuit is open');

        // After the open period the endpoint is tried again; a 2xx closes the circuit.
        failing.decide = () => 200;
        clock.advance(CIRCUIT.capMs + 60 * 60_000);
        for (let i = 0; i < 6 && (await count('pending')) > 0; i++) {
          await drain(t);
          clock.advance(60 * 60_000);
        }
        assert.equal(await count('delivered'), 12);
      } finally {
        await failing.close();
      }
    });

    it('hooks cannot multiply deliveries: at most 10 per assistant, one per event type and URL', async () => {
      const eleven = Array.from({ length: 11 }, (_, i) => ({ type: 'task_status_changed', parameters: { url: `https://hooks.example.com/${i}`, secret: 's' } }));
      const tooMany = await t.call('POST', `${noisy.orgPath}/agents`, { body: { name: 'Many', callEventHooks: eleven } });
      assert.equal(tooMany.statusCode, 400, tooMany.body);
      const same = Array.from({ length: 2 }, () => ({ type: 'task_status_changed', parameters: { url: 'https://hooks.example.com/same', secret: 's' } }));
      const twice = await t.call('POST', `${noisy.orgPath}/agents`, { body: { name: 'Twice', callEventHooks: same } });
      assert.equal(twice.statusCode, 400, twice.body);
      assert.deepEqual(twice.json().error.details.map((d: { path: string }) => d.path), ['callEventHooks[1].parameters.url']);
    });
  });
}
