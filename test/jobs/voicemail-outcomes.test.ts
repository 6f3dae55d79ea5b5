// The task side of who answered: a voicemail box is retried like no answer (in the next allowed
// window), a message left completes the task unless the agent asks to try again, and
// PARLEY_TASK_MAX_VOICEMAILS ends a task that keeps reaching voicemail. The dialer is the tests'
// own; the SIP side is test/telephony/voicemail.test.ts.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.ts';
import type { DialOutcome } from '../../src/telephony/dialer.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { TestDialer } from '../helpers/test-dialer.ts';

for (const dialect of DIALECTS) {
  describe(`voicemail outcomes of agent tasks (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    let clock: ManualClock;
    let dialer: TestDialer;
    let url: string;
    let outcomes: DialOutcome[] = [];

    before(async () => {
      clock = new ManualClock('2026-11-20T10:00:00Z'); // a Friday
      dialer = new TestDialer(() => outcomes.shift() ?? { status: 'completed' });
      t = await buildTestApp(dialect, { PARLEY_RETRY_BASE_SECONDS: '60' }, { clock, dialer });
      a = await createTenant(t);
      const agent = await t.call('POST', `${a.orgPath}/agents`, { body: { name: 'Caller' } });
      assert.equal(agent.statusCode, 201, agent.body);
      url = `${a.orgPath}/agents/${agent.json().data.id}/tasks`;
    });
    after(() => t.close());

    const createTask = async (body: Record<string, unknown> = {}) => {
      const res = await t.call('POST', url, { body: { targetNumber: '+4930123456', execute: true, maxAttempts: 5, ...body } });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().data.id as string;
    };
    const task = async (id: string) => (await t.call('GET', `${url}/${id}`)).json().data;
    const attempts = async (id: string) => (await t.call('GET', `${url}/${id}/attempts?sort=attempt,asc`)).json().data as { outcome: string; error: string | null; callId: string | null }[];
    /** Runs the task's next attempt, with the clock at its nextAttemptAt. */
    const attempt = async (id: string) => {
      const due = (await task(id)).nextAttemptAt;
      if (due && Date.parse(due) > clock.now().getTime()) clock.set(due);
      assert.equal((await t.app.runner.tick()).claimed.agent_task, 1);
      await t.app.runner.idle();
      return task(id);
    };

    it('a voicemail box is retried like no answer; reaching it a second time ends the task FAILED, saying why', async () => {
      clock.set('2026-11-20T10:00:00Z');
      const id = await createTask();
      outcomes = [{ status: 'voicemail', callId: crypto.randomUUID(), sipCode: 200 }, { status: 'no_answer' }, { status: 'voicemail', sipCode: 200 }];
      const first = await attempt(id);
      assert.deepEqual([first.status, first.lastError], ['SCHEDULED', 'attempt 1: voicemail, no message left']);
      assert.equal(first.nextAttemptAt, '2026-11-20T10:01:00.000Z', 'the backoff of no answer');
      assert.equal((await attempt(id)).status, 'SCHEDULED');
      const third = await attempt(id);
      assert.deepEqual(
        [third.status, third.lastError],
        ['FAILED', 'attempt 3: voicemail, no message left; reached voicemail 2 times, the most PARLEY_TASK_MAX_VOICEMAILS allows'],
      );
      assert.deepEqual((await attempts(id)).map((x) => x.outcome), ['voicemail', 'no_answer', 'voicemail']);
    });

    it('a message left completes the task with the call\'s conclusion', async () => {
      const id = await createTask();
      outcomes = [{ status: 'voicemail_left', retry: false, conclusionId: 'conclusion-vm', sipCode: 200 }];
      const done = await attempt(id);
      assert.deepEqual([done.status, done.lastError, done.conclusionId, done.attempts], ['COMPLETED', null, 'conclusion-vm', 1]);
      assert.deepEqual((await attempts(id)).map((x) => [x.outcome, x.error]), [['voicemail_left', null]]);
    });

    it('a message left is tried again when the agent asks, until PARLEY_TASK_MAX_VOICEMAILS, which then completes the task', async () => {
      const id = await createTask();
      outcomes = [{ status: 'voicemail_left', retry: true }, { status: 'voicemail_left', retry: true, conclusionId: 'conclusion-2' }];
      const first = await attempt(id);
      assert.deepEqual([first.status, first.lastError], ['SCHEDULED', 'attempt 1: voicemail, message left; trying again as the agent asks']);
      const second = await attempt(id);
      assert.deepEqual([second.status, second.conclusionId], ['COMPLETED', 'conclusion-2']);
    });

    it('out of attempts, a voicemail ends the task FAILED like any retryable outcome', async () => {
      const id = await createTask({ maxAttempts: 1 });
      outcomes = [{ status: 'voicemail' }];
      const done = await attempt(id);
      assert.deepEqual([done.status, done.lastError], ['FAILED', 'attempt 1: voicemail, no message left']);
    });

    it('the retry of a voicemail waits for the task\'s window, as no answer does', async () => {
      clock.set('2026-11-20T16:59:30Z'); // Friday, half a minute before the window closes
      const id = await createTask({ allowedHoursBegin: 9, allowedHours: 8, onlyWeekdays: true });
      outcomes = [{ status: 'voicemail' }];
      assert.equal((await t.app.runner.tick()).claimed.agent_task, 1);
      await t.app.runner.idle();
      const next = await task(id);
      assert.deepEqual([next.status, next.nextAttemptAt], ['SCHEDULED', '2026-11-23T09:00:00.000Z'], 'Monday 09:00');
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`PARLEY_TASK_MAX_VOICEMAILS (${dialect})`, () => {
    it('is read from the environment: 1 ends the task at the first voicemail', async () => {
      const dialer = new TestDialer(() => ({ status: 'voicemail' }));
      const t = await buildTestApp(dialect, { PARLEY_TASK_MAX_VOICEMAILS: '1' }, { dialer });
      try {
        const a = await createTenant(t);
        const agent = await t.call('POST', `${a.orgPath}/agents`, { body: { name: 'Caller' } });
        const url = `${a.orgPath}/agents/${agent.json().data.id}/tasks`;
        const created = await t.call('POST', url, { body: { targetNumber: '+4930123456', execute: true } });
        assert.equal((await t.app.runner.tick()).claimed.agent_task, 1);
        await t.app.runner.idle();
        const done = (await t.call('GET', `${url}/${created.json().data.id}`)).json().data;
        assert.deepEqual([done.status, done.lastError], ['FAILED', 'attempt 1: voicemail, no message left; reached voicemail 1 time, the most PARLEY_TASK_MAX_VOICEMAILS allows']);
      } finally {
        await t.close();
      }
    });
  });
}
