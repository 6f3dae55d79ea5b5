import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { TestDialer } from '../helpers/test-dialer.ts';


for (const dialect of DIALECTS) {
  describe(`agent tasks in the job runner (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    let clock: ManualClock;
    let dialer: TestDialer;
    let agentSeq = 0;

    before(async () => {
      clock = new ManualClock('2026-11-20T10:00:00Z'); // a Friday
      dialer = new TestDialer();
      t = await buildTestApp(dialect, { PARLEY_RETRY_BASE_SECONDS: '60' }, { clock, dialer });
      a = await createTenant(t);
    });
    after(() => t.close());

    /** An agent calling through its own SIP credentials with the given limit. */
    async function agentWithTrunk(maxAgentTasks = 5) {
      agentSeq++;
      const cred = await t.call('POST', `${a.orgPath}/sip/credentials`, {
        body: { name: `trunk ${agentSeq}`, hostname: 'sip.example.com', username: `u${agentSeq}`, password: 'pw', maxAgentTasks },
      });
      assert.equal(cred.statusCode, 201, cred.body);
      const number = await t.call('POST', `${a.orgPath}/sip/numbers`, {
        body: { name: `line ${agentSeq}`, number: `+49301000${String(agentSeq).padStart(3, '0')}`, sipCredentialId: cred.json().data.id },
      });
      assert.equal(number.statusCode, 201, number.body);
      const agent = await t.call('POST', `${a.orgPath}/agents`, { body: { name: `agent ${agentSeq}`, telephoneNumberId: number.json().data.id } });
      assert.equal(agent.statusCode, 201, agent.body);
      return { agentId: agent.json().data.id as string, credentialId: cred.json().data.id as string, url: `${a.orgPath}/agents/${agent.json().data.id}/tasks` };
    }

    const createTask = async (url: string, body: Record<string, unknown> = {}) => {
      const res = await t.call('POST', url, { body: { targetNumber: '+4930123456', execute: true, ...body } });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().data.id as string;
    };
    const task = async (url: string, id: string) => (await t.call('GET', `${url}/${id}`)).json().data;
    const tick = async () => {
      const result = await t.app.runner.tick();
      await t.app.runner.idle();
      return result;
    };

    it('a null window runs at once and completes', async () => {
      clock.set('2026-11-20T10:00:00Z');
      dialer.script = () => ({ status: 'completed', conclusionId: 'conclusion-1' });
      const { url, credentialId } = await agentWithTrunk();
      const id = await createTask(url, { userValues: { firstName: 'Ada' } });
      assert.equal((await tick()).claimed.agent_task, 1);
      const done = await task(url, id);
      assert.deepEqual([done.status, done.attempts, done.conclusionId, done.lastError], ['COMPLETED', 1, 'conclusion-1', null]);
      assert.ok(done.completedAt);
      const call = dialer.calls.at(-1);
      assert.deepEqual([call?.targetNumber, call?.sipCredentialId, call?.userValues], ['+4930123456', credentialId, { firstName: 'Ada' }]);
    });

    it('begin 22 + 4 hours wraps midnight: deferred to 22:00, runs at 23:30', async () => {
      clock.set('2026-11-18T21:00:00Z'); // Wednesday
      dialer.script = () => ({ status: 'completed' });
      const { url } = await agentWithTrunk();
      const id = await createTask(url, { allowedHoursBegin: 22, allowedHours: 4 });
      assert.equal((await task(url, id)).nextAttemptAt, '2026-11-18T22:00:00.000Z');
      assert.equal((await tick()).claimed.agent_task, 0);
      clock.set('2026-11-18T23:30:00Z');
      assert.equal((await tick()).claimed.agent_task, 1);
      assert.equal((await task(url, id)).status, 'COMPLETED');
    });

    it('Friday 23:00 with onlyWeekdays waits until Monday', async () => {
      clock.set('2026-11-20T23:00:00Z');
      const { url } = await agentWithTrunk();
      const id = await createTask(url, { allowedHoursBegin: 9, allowedHours: 8, onlyWeekdays: true });
      assert.equal((await task(url, id)).nextAttemptAt, '2026-11-23T09:00:00.000Z');
      clock.set('2026-11-22T12:00:00Z'); // Sunday noon
      assert.equal((await tick()).claimed.agent_task, 0);
      clock.set('2026-11-23T09:00:00Z');
      assert.equal((await tick()).claimed.agent_task, 1);
    });

    it('a timezone window moves with daylight saving (America/New_York, 9-17 local)', async () => {
      const { url } = await agentWithTrunk();
      clock.set('2026-03-06T12:00:00Z'); // Friday before the change: 07:00 EST
      const winter = await createTask(url, { allowedHoursBegin: 9, allowedHours: 8, timezone: 'America/New_York', onlyWeekdays: true });
      assert.equal((await task(url, winter)).nextAttemptAt, '2026-03-06T14:00:00.000Z');
      clock.set('2026-03-07T12:00:00Z'); // Saturday; DST starts Sunday 2026-03-08
      const summer = await createTask(url, { allowedHoursBegin: 9, allowedHours: 8, timezone: 'America/New_York', onlyWeekdays: true });
      assert.equal((await task(url, summer)).nextAttemptAt, '2026-03-09T13:00:00.000Z', 'Monday 09:00 EDT');
    });

    it('no answer is retried with exponential backoff until the limit, then FAILED', async () => {
      clock.set('2026-11-18T10:00:00Z');
      dialer.script = () => ({ status: 'no_answer' });
      const { url } = await agentWithTrunk();
      const id = await createTask(url);
      await tick();
      let state = await task(url, id);
      assert.deepEqual([state.status, state.attempts, state.lastError], ['SCHEDULED', 1, 'attempt 1: no answer']);
      assert.equal(state.nextAttemptAt, '2026-11-18T10:01:00.000Z', '1 minute after the first attempt');
      clock.advance(30_000);
      assert.equal((await tick()).claimed.agent_task, 0, 'not before the backoff');
      clock.set('2026-11-18T10:01:00Z');
      await tick();
      state = await task(url, id);
      assert.equal(state.nextAttemptAt, '2026-11-18T10:03:00.000Z', '2 minutes after the second');
      clock.set('2026-11-18T10:03:00Z');
      await tick();
      state = await task(url, id);
      assert.deepEqual([state.status, state.attempts, state.lastError], ['FAILED', 3, 'attempt 3: no answer']);
      assert.equal((await tick()).claimed.agent_task, 0);
    });

    it('a decline (SIP 603) and an invalid number are not retried', async () => {
      clock.set('2026-11-18T10:00:00Z');
      const { url } = await agentWithTrunk();
      dialer.script = () => ({ status: 'declined', sipCode: 603 });
      const declined = await createTask(url);
      await tick();
      const d = await task(url, declined);
      assert.deepEqual([d.status, d.attempts, d.lastError], ['FAILED', 1, 'attempt 1: declined (SIP 603)']);
      dialer.script = () => ({ status: 'invalid_number', sipCode: 404 });
      const invalid = await createTask(url);
      await tick();
      assert.equal((await task(url, invalid)).status, 'FAILED');
    });

    it('never runs more calls on one credential than maxAgentTasks', async () => {
      clock.set('2026-11-18T10:00:00Z');
      dialer.script = () => 'hold';
      const { url, credentialId } = await agentWithTrunk(2);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push(await createTask(url));
      assert.equal((await t.app.runner.tick()).claimed.agent_task, 2);
      assert.equal((await t.app.runner.tick()).claimed.agent_task, 0, 'full');
      const running = dialer.holding.filter((id) => ids.includes(id));
      assert.equal(running.length, 2);
      assert.ok(dialer.calls.filter((c) => ids.includes(c.taskId)).every((c) => c.sipCredentialId === credentialId));
      dialer.finish(running[0] as string);
      await t.app.runner.whenDone('agent_task', running[0] as string);
      assert.equal((await t.app.runner.tick()).claimed.agent_task, 1, 'a slot freed, one more starts');
      for (const id of dialer.holding) dialer.finish(id);
      await t.app.runner.idle();
      while (dialer.holding.length || (await t.app.runner.tick()).claimed.agent_task) {
        for (const id of dialer.holding) dialer.finish(id);
        await t.app.runner.idle();
      }
      for (const id of ids) assert.equal((await task(url, id)).status, 'COMPLETED');
    });

    it('cancelling an in-progress task hangs up the call and keeps it CANCELLED', async () => {
      clock.set('2026-11-18T10:00:00Z');
      dialer.script = () => 'hold';
      const { url } = await agentWithTrunk();
      const id = await createTask(url);
      await t.app.runner.tick();
      assert.equal((await task(url, id)).status, 'IN_PROGRESS');
      const cancelled = await t.call('POST', `${url}/${id}/cancel`);
      assert.equal(cancelled.statusCode, 200);
      await t.app.runner.idle();
      assert.ok(dialer.aborted.includes(id), 'the call was hung up');
      const state = await task(url, id);
      assert.equal(state.status, 'CANCELLED');
      assert.equal((await t.call('DELETE', `${url}/${id}`)).statusCode, 200);
    });

    it('an in-progress task cannot be deleted', async () => {
      clock.set('2026-11-18T10:00:00Z');
      dialer.script = () => 'hold';
      const { url } = await agentWithTrunk();
      const id = await createTask(url);
      await t.app.runner.tick();
      assert.equal((await t.call('DELETE', `${url}/${id}`)).statusCode, 409);
      dialer.finish(id);
      await t.app.runner.idle();
    });

    it('pause holds every task of the agent back; resume lets them run; nothing is lost', async () => {
      clock.set('2026-11-18T10:00:00Z');
      dialer.script = () => ({ status: 'completed' });
      const { url } = await agentWithTrunk();
      await t.call('POST', `${url}/pause`);
      const ids = [await createTask(url), await createTask(url)];
      assert.equal((await tick()).claimed.agent_task, 0);
      for (const id of ids) assert.equal((await task(url, id)).status, 'SCHEDULED');
      await t.call('POST', `${url}/resume`);
      assert.equal((await tick()).claimed.agent_task, 2);
      for (const id of ids) assert.equal((await task(url, id)).status, 'COMPLETED');
    });

    it('a task whose worker died is taken up again once its lease expires', async () => {
      clock.set('2026-11-18T10:00:00Z');
      dialer.script = () => ({ status: 'completed' });
      const { url } = await agentWithTrunk();
      const id = await createTask(url);
      // What a worker killed mid-call leaves behind: IN_PROGRESS, leased to someone gone.
      await t.db.kysely.transaction().execute(async (trx) => {
        const { moveTask } = await import('../../src/modules/tasks/tasks.repository.ts');
        const row = await trx.selectFrom('agent_tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
        await moveTask(trx, row, 'SCHEDULED', { status: 'IN_PROGRESS', set: { attempts: 1, lease_owner: 'dead-worker', lease_expires_at: '2026-11-18T10:01:00.000Z' } }, '2026-11-18T10:00:00.000Z');
      });
      assert.equal((await tick()).reclaimed.agent_task, 0, 'the lease still holds');
      assert.equal((await task(url, id)).status, 'IN_PROGRESS');
      clock.set('2026-11-18T10:02:00Z');
      const result = await tick();
      assert.equal(result.reclaimed.agent_task, 1);
      assert.equal(result.claimed.agent_task, 1);
      const state = await task(url, id);
      assert.deepEqual([state.status, state.attempts], ['COMPLETED', 2]);
    });

    it('with the `none` dialer an attempt fails at once with a clear error', async () => {
      const { noDialer } = await import('../../src/telephony/dialer.ts');
      assert.deepEqual(await noDialer.dial({} as never), { status: 'failed', error: 'no dialer configured', retryable: false });
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`task_status_changed events (${dialect})`, () => {
    it('every status change of a task is written to the outbox for the agent\'s hooks', async () => {
      const clock = new ManualClock('2026-11-18T10:00:00Z');
      const dialer = new TestDialer(() => ({ status: 'completed', conclusionId: 'c-1' }));
      const t = await buildTestApp(dialect, { PARLEY_EGRESS_ALLOW: '127.0.0.0/8' }, { clock, dialer });
      try {
        const a = await createTenant(t);
        const hook = { type: 'task_status_changed', parameters: { url: 'http://127.0.0.1:9/hook', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' } };
        const agent = (await t.call('POST', `${a.orgPath}/agents`, { body: { name: 'Hooked', callEventHooks: [hook] } })).json().data.id;
        const url = `${a.orgPath}/agents/${agent}/tasks`;
        const task = (await t.call('POST', url, { body: { targetNumber: '+4930123456' } })).json().data.id;
        await t.call('POST', `${url}/${task}/execute`);
        await t.app.runner.tick();
        await t.app.runner.idle();
        const rows = await t.db.kysely.selectFrom('webhook_deliveries' as never).selectAll().execute() as { payload: unknown }[];
        const payloads = rows.map((r) => (typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload) as Record<string, unknown>);
        assert.deepEqual(payloads.map((p) => `${String(p.previousStatus)}>${String(p.status)}`).sort(), ['IN_PROGRESS>COMPLETED', 'PENDING>SCHEDULED', 'SCHEDULED>IN_PROGRESS']);
        assert.ok(payloads.every((p) => p.taskId === task && p.agentId === agent));
        assert.equal(payloads.find((p) => p.status === 'COMPLETED')?.conclusionId, 'c-1');
      } finally {
        await t.close();
      }
    });
  });
}
