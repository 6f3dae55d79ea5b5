import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CallLogEntry, CallOutcome } from '../../src/calls/record.ts';
import { ManualClock } from '../../src/clock.ts';
import type { Verdict } from '../../src/calls/voicemail-detection.ts';
import { callStore } from '../../src/modules/calls/call-store.ts';
import { appendEntries } from '../../src/modules/calls/calls.repository.ts';
import { endCall } from '../../src/modules/calls/calls.service.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createApiToken, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { TestDialer } from '../helpers/test-dialer.ts';

const NOW = '2026-11-23T12:00:00.000Z';
const RANGE = 'from=2026-11-20T00:00:00Z&to=2026-11-23T00:00:00Z';

for (const dialect of DIALECTS) {
  describe(`GET {org}/analytics/overview (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    let other: Tenant;
    let clock: ManualClock;
    let dialer: TestDialer;

    /**
     * A call of the tenant that started and ended at `at`, written by the service's own
     * writers (the call start route, the log appender, the end of a call).
     */
    async function call(tenant: Tenant, assistantId: string, at: string, outcome: CallOutcome, log: CallLogEntry[] = [], answeredBy?: Verdict) {
      clock.set(at);
      const started = await t.call('POST', `${tenant.orgPath}/assistants/${assistantId}/calls`, { body: {} });
      assert.equal(started.statusCode, 201, started.body);
      const id = started.json().data.id as string;
      if (answeredBy) {
        await callStore({ ctx: t.ctx, owner: 'test' }).noteDetection(id, { answeredBy, detection: { verdict: answeredBy, decidedAfterMs: 900, action: 'continued', signals: [] } });
      }
      await t.db.kysely.transaction().execute(async (trx) => {
        const row = await trx.selectFrom('calls').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
        await appendEntries(trx, id, tenant.organizationId, log);
        await endCall(trx, row, { reason: 'client_ended', outcome, failure: null, transcript: [], toolInvocations: [] }, clock.now());
      });
    }
    const said = (at: string, latencyMs?: number): CallLogEntry =>
      ({ kind: 'utterance', entry: { role: 'assistant', text: 'Hello.', at, ...(latencyMs === undefined ? {} : { latencyMs }) } });
    const tool = (at: string, ok: boolean): CallLogEntry => ({
      kind: 'tool',
      invocation: { id: 'c1', name: 'lookup_order', arguments: {}, ok, statusCode: ok ? 200 : 503, latencyMs: 12, outcome: ok ? 'ok' : 'http_error', at },
    });
    const overview = async (query = RANGE, token?: string) => {
      const res = await t.call('GET', `${a.orgPath}/analytics/overview?${query}`, token ? { token } : {});
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data;
    };

    before(async () => {
      clock = new ManualClock(NOW);
      dialer = new TestDialer();
      t = await buildTestApp(dialect, {}, { clock, dialer });
      a = await createTenant(t);
      other = await createTenant(t, 'Other');
      const assistant = (await t.call('POST', `${a.orgPath}/assistants`, { body: { name: 'Front desk' } })).json().data.id;
      const elsewhere = (await t.call('POST', `${other.orgPath}/assistants`, { body: { name: 'Elsewhere' } })).json().data.id;

      // Twenty answered turns of 10..200 ms on the 20th, with an unanswered greeting and a user line beside them.
      const turns = Array.from({ length: 20 }, (_, i) => said(`2026-11-20T09:00:${String(i).padStart(2, '0')}.000Z`, (20 - i) * 10));
      const user: CallLogEntry = { kind: 'utterance', entry: { role: 'user', text: 'Hi', at: '2026-11-20T08:59:59.000Z' } };
      await call(a, assistant, '2026-11-20T10:00:00.000Z', 'completed', [said('2026-11-20T08:59:58.000Z'), user, ...turns], 'human');
      await call(a, assistant, '2026-11-20T23:59:59.999Z', 'completed', [tool('2026-11-20T09:30:00.000Z', true), tool('2026-11-20T09:31:00.000Z', false)], 'voicemail');
      await call(a, assistant, '2026-11-20T11:00:00.000Z', 'failed', [tool('2026-11-21T09:30:00.000Z', true), tool('2026-11-22T09:30:00.000Z', true)], 'voicemail');
      await call(a, assistant, '2026-11-22T08:00:00.000Z', 'abandoned', [], 'screening');
      // Outside [from, to): just before, and exactly at the end; and another organization's.
      await call(a, assistant, '2026-11-19T23:59:59.999Z', 'completed', [said('2026-11-19T23:59:59.999Z', 5), tool('2026-11-19T23:00:00.000Z', false)], 'unknown');
      await call(a, assistant, '2026-11-23T00:00:00.000Z', 'failed', [said('2026-11-23T00:00:00.000Z', 9000)], 'human');
      await call(other, elsewhere, '2026-11-21T10:00:00.000Z', 'completed', [said('2026-11-21T10:00:00.000Z', 7000), tool('2026-11-21T10:00:00.000Z', false)], 'voicemail');
      clock.set(NOW);
    });
    after(async () => {
      for (const id of dialer.holding) dialer.finish(id);
      await t.close();
    });

    it('counts the calls that ended on each UTC day of the range by outcome, zeros included, and nothing outside it', async () => {
      const data = await overview();
      assert.deepEqual([data.from, data.to], ['2026-11-20T00:00:00.000Z', '2026-11-23T00:00:00.000Z']);
      assert.deepEqual(data.callsPerDay, [
        { day: '2026-11-20', completed: 2, abandoned: 0, failed: 1 },
        { day: '2026-11-21', completed: 0, abandoned: 0, failed: 0 },
        { day: '2026-11-22', completed: 0, abandoned: 1, failed: 0 },
      ]);
    });

    it('counts the calls that ended on each UTC day by who answered them (calls a detection ran on), zeros included', async () => {
      const data = await overview();
      assert.deepEqual(data.answeredByPerDay, [
        { day: '2026-11-20', human: 1, voicemail: 2, screening: 0, unknown: 0 },
        { day: '2026-11-21', human: 0, voicemail: 0, screening: 0, unknown: 0 },
        { day: '2026-11-22', human: 0, voicemail: 0, screening: 1, unknown: 0 },
      ]);
    });

    it('gives nearest-rank turn latency percentiles of the answered turns, and the tool error rate', async () => {
      const data = await overview();
      // 20 values 10..200: p50 is the 10th (100, not an interpolated 105), p95 the 19th.
      assert.deepEqual(data.turnLatency, { turns: 20, p50Ms: 100, p95Ms: 190 });
      assert.deepEqual(data.tools, { invocations: 4, errors: 1, errorRate: 0.25 });
      const one = await overview('from=2026-11-20T09:00:19Z&to=2026-11-20T09:00:20Z');
      assert.deepEqual(one.turnLatency, { turns: 1, p50Ms: 10, p95Ms: 10 });
      const none = await overview('from=2026-11-21T00:00:00Z&to=2026-11-21T00:00:00Z');
      assert.deepEqual([none.callsPerDay, none.turnLatency, none.tools], [[], { turns: 0, p50Ms: null, p95Ms: null }, { invocations: 0, errors: 0, errorRate: 0 }]);
    });

    it('counts the tasks by status from the kept counters, as a GROUP BY over the rows would', async () => {
      const agent = (await t.call('POST', `${a.orgPath}/agents`, { body: { name: 'Caller' } })).json().data.id;
      const tasks = `${a.orgPath}/agents/${agent}/tasks`;
      const create = async (execute: boolean) => (await t.call('POST', tasks, { body: { targetNumber: '+4930123456', execute } })).json().data.id as string;
      dialer.script = () => ({ status: 'completed' });
      await create(true);
      await t.app.runner.tick();
      await t.app.runner.idle();
      dialer.script = () => ({ status: 'failed', error: 'unreachable', retryable: false });
      await create(true);
      await t.app.runner.tick();
      await t.app.runner.idle();
      dialer.script = () => 'hold';
      await create(true);
      await t.app.runner.tick();
      assert.equal(dialer.holding.length, 1);
      await create(true);
      await create(true);
      await create(false);
      await create(false);
      await t.call('POST', `${tasks}/${await create(false)}/cancel`);
      const otherAgent = (await t.call('POST', `${other.orgPath}/agents`, { body: { name: 'Elsewhere' } })).json().data.id;
      await t.call('POST', `${other.orgPath}/agents/${otherAgent}/tasks`, { body: { targetNumber: '+4930123456', execute: false } });

      const { tasks: counts } = await overview();
      assert.deepEqual(counts, { pending: 2, scheduled: 2, inProgress: 1, completed: 1, failed: 1, cancelled: 1 });
      const rows = await t.db.kysely.selectFrom('agent_tasks').select(['status', (eb) => eb.fn.countAll().as('n')])
        .where('organization_id', '=', a.organizationId).groupBy('status').execute();
      const grouped = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
      assert.deepEqual(grouped, { PENDING: 2, SCHEDULED: 2, IN_PROGRESS: 1, COMPLETED: 1, FAILED: 1, CANCELLED: 1 });
    });

    it('defaults to the 30 days before the app clock, and refuses a reversed or too long range naming the field', async () => {
      const data = await overview('');
      assert.deepEqual([data.from, data.to], ['2026-10-24T12:00:00.000Z', NOW]);
      assert.equal(data.callsPerDay.length, 31);
      assert.deepEqual(data.callsPerDay.find((d: { day: string }) => d.day === '2026-11-20'), { day: '2026-11-20', completed: 2, abandoned: 0, failed: 1 });
      assert.equal((await overview('from=2025-11-23T00:00:00Z&to=2026-11-24T00:00:00Z')).callsPerDay.length, 366);
      for (const [query, message] of [
        ['from=2025-11-23T00:00:00Z&to=2026-11-24T00:00:01Z', /366 days/],
        ['from=2026-11-22T00:00:00Z&to=2026-11-21T00:00:00Z', /after to/],
        ['from=yesterday', /date-time/],
        // A leap second is a valid RFC 3339 date-time that JavaScript cannot read.
        ['from=2016-12-31T23:59:60Z&to=2017-01-01T00:00:00Z', /can read/],
      ] as const) {
        const res = await t.call('GET', `${a.orgPath}/analytics/overview?${query}`);
        assert.equal(res.statusCode, 400, query);
        assert.equal(res.json().error.details[0].path, 'from');
        assert.match(res.json().error.details[0].message, message);
      }
      assert.equal((await t.call('GET', `${a.orgPath}/analytics/overview?days=3`)).statusCode, 400);
    });

    it('needs calls:read, and shows another organization only its own numbers', async () => {
      const viewer = await createApiToken(t, a.vendorId, { role: 'viewer', organizationId: a.organizationId });
      assert.equal((await overview(RANGE, viewer)).tools.invocations, 4);
      const noCalls = await createApiToken(t, a.vendorId, { permissions: ['assistants:read'] });
      assert.equal((await t.call('GET', `${a.orgPath}/analytics/overview`, { token: noCalls })).statusCode, 403);
      const theirs = (await t.call('GET', `${other.orgPath}/analytics/overview?${RANGE}`)).json().data;
      assert.deepEqual([theirs.turnLatency.turns, theirs.tools.invocations, theirs.callsPerDay[1].completed], [1, 1, 1]);
    });
  });
}
