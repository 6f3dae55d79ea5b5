/**
 * Who answered, in the console (Chromium against the real service): an agent's task board shows
 * how each attempt ended (voicemail, voicemail_left), a call page says who answered it and what the
 * agent did, with the signals, and the overview charts answered-by per day. The calls are written
 * by the service's own writers, as the dialer's detection writes them; axe-core on every page.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { DEFAULT_CONSOLE_ROOT } from '../../src/http/console.ts';
import type { CallDetection } from '../../src/calls/voicemail-detection.ts';
import { callStore } from '../../src/modules/calls/call-store.ts';
import { ADMIN_TOKEN, buildTestApp, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { TestDialer } from '../helpers/test-dialer.ts';
import { captureLooks, openBrowser } from './support/browser.ts';
import { SHOTS } from './support/walk.ts';

const LEFT: CallDetection = {
  verdict: 'voicemail', decidedAfterMs: 2480, action: 'left_message',
  signals: [
    { signal: 'voicemail_words', atMs: 300, phrase: 'leave a message' },
    { signal: 'beep', atMs: 7690, durationMs: 520, frequencyHz: 1000, levelDbfs: -12 },
    { signal: 'message_started', atMs: 8260 },
    { signal: 'message_ended', atMs: 12140 },
  ],
};
const HUNG_UP: CallDetection = { verdict: 'voicemail', decidedAfterMs: 2600, action: 'hung_up', signals: [{ signal: 'long_speech', atMs: 200, durationMs: 2420 }] };
const PERSON: CallDetection = { verdict: 'human', decidedAfterMs: 1380, action: 'continued', signals: [{ signal: 'short_answer', atMs: 300, durationMs: 480 }] };

for (const [index, dialect] of DIALECTS.entries()) {
  describe(`who answered, in the console (${dialect})`, () => {
    let t: TestApp;
    let tenant: Tenant;
    let base: string;
    let agentId: string;
    const dialer = new TestDialer();
    const violations: string[] = [];
    const shoot = async (page: Page, name: string) => {
      if (index === 0) violations.push(...(await captureLooks(page, SHOTS, name)));
    };

    /** An ended call of the agent's, with the detection the dialer's detection would have written. */
    async function call(detection: CallDetection): Promise<string> {
      const store = callStore({ ctx: t.ctx, owner: 'console-test' });
      const live = await store.insertLive({
        kind: 'agent', organizationId: tenant.organizationId, sourceId: agentId, userValues: { firstName: 'Ada' }, traceId: crypto.randomUUID(),
        transport: { type: 'sip', calledNumber: '+4930123456', callingNumber: '+4930999999' }, audio: { encoding: 'mulaw', sampleRate: 8000 },
      });
      await store.noteDetection(live.id, { answeredBy: detection.verdict, detection });
      const transcript = detection.action === 'left_message' ? [{ role: 'assistant' as const, text: 'Hi Ada, this is Parley about your order.', at: new Date().toISOString() }] : [];
      const recorder = store.recorder(live.id);
      await recorder.append(transcript.map((entry) => ({ kind: 'utterance' as const, entry })));
      await recorder.finish({ reason: detection.action === 'continued' ? 'client_ended' : 'assistant_ended', outcome: 'abandoned', failure: null, transcript, toolInvocations: [] });
      return live.id;
    }

    before(async () => {
      assert.ok(existsSync(join(DEFAULT_CONSOLE_ROOT, 'index.html')), 'the console is not built: run `npm run build:console` (scripts/test.sh does)');
      t = await buildTestApp(dialect, {}, { dialer });
      tenant = await createTenant(t);
      const agent = await t.call('POST', `${tenant.orgPath}/agents`, {
        body: { name: 'Reminder caller', extensions: [{ type: 'voicemail_detection', parameters: { action: 'leave_message', message: 'Hi {{firstName}}, please call us back.' } }] },
      });
      assert.equal(agent.statusCode, 201, agent.body);
      agentId = agent.json().data.id;
      const left = await call(LEFT);
      const hungUp = await call(HUNG_UP);
      const person = await call(PERSON);
      const outcomes = new Map([
        ['+4930100001', { status: 'voicemail_left' as const, retry: false, callId: left, sipCode: 200 }],
        ['+4930100002', { status: 'voicemail' as const, callId: hungUp, sipCode: 200 }],
        ['+4930100003', { status: 'completed' as const, callId: person, sipCode: 200 }],
      ]);
      dialer.script = (request) => outcomes.get(request.targetNumber) ?? { status: 'completed' };
      for (const targetNumber of outcomes.keys()) {
        const created = await t.call('POST', `${tenant.orgPath}/agents/${agentId}/tasks`, { body: { targetNumber, execute: true } });
        assert.equal(created.statusCode, 201, created.body);
      }
      await t.app.runner.tick();
      await t.app.runner.idle();
      base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    });
    after(() => t?.close());

    it('the board shows each attempt\'s outcome, the call page who answered and why, the overview the calls by who answered', async () => {
      const b = await openBrowser(base);
      try {
        const { page } = b;
        await page.goto('/console/signin');
        await page.getByLabel('API token').fill(ADMIN_TOKEN);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByLabel('Vendor').selectOption({ label: 'Acme' });
        await page.getByLabel('Organization').selectOption({ label: 'Acme main' });

        // The overview: answered-by per day, as bars and as a table.
        await page.getByRole('img', { name: 'Calls per day by who answered' }).waitFor();
        await page.getByRole('region', { name: 'Who answered' }).getByText('As a table').click();
        // Summed over the days shown: the calls may have ended on both sides of midnight UTC.
        const rows = page.getByRole('table', { name: 'Who answered per day' }).getByRole('row').filter({ has: page.getByRole('cell') });
        const totals = [0, 0, 0, 0];
        for (const cells of await Promise.all((await rows.all()).map((row) => row.getByRole('cell').allTextContents()))) {
          cells.slice(1).forEach((n, i) => (totals[i]! += Number(n)));
        }
        assert.deepEqual(totals, [1, 2, 0, 0], 'human, voicemail, screening, unknown');
        await shoot(page, 'overview-answered-by');

        // The task board: a voicemail is retried (SCHEDULED, its last error says why), a message left completed the task.
        await page.goto(`/console/agents/${agentId}/tasks`);
        await page.locator('#col-COMPLETED .count').getByText('2').waitFor();
        await page.locator('#col-SCHEDULED .count').getByText('1').waitFor();
        const scheduled = page.locator('section[aria-labelledby="col-SCHEDULED"]');
        await scheduled.getByText('attempt 1: voicemail, no message left').waitFor();
        await scheduled.getByRole('button', { name: 'Attempts of task to +4930100002' }).click();
        const retried = page.getByRole('list', { name: 'Attempts' }).getByRole('listitem');
        await retried.getByText('voicemail', { exact: true }).waitFor();
        assert.match((await retried.textContent()) ?? '', /^#1 voicemail SIP 200 · call/);
        await shoot(page, 'tasks-voicemail');
        await scheduled.getByRole('button', { name: 'Attempts of task to +4930100002' }).click();
        await page.getByRole('button', { name: 'Attempts of task to +4930100001' }).click();
        const left = page.getByRole('list', { name: 'Attempts' }).getByRole('listitem');
        await left.getByText('voicemail_left', { exact: true }).waitFor();
        await left.getByRole('link', { name: 'Call of attempt 1' }).click();

        // The call: who answered, what the agent did, and the signals with their times.
        await page.getByRole('heading', { name: /^Call / }).waitFor();
        const facts = page.locator('dl.facts');
        await facts.getByText('left message, decided after 2.5 s').waitFor();
        assert.equal(await facts.locator('.badge-voicemail').textContent(), 'voicemail');
        const signals = await page.getByRole('list', { name: 'Detection signals' }).getByRole('listitem').allTextContents();
        assert.deepEqual(signals.map((s) => s.replace(/\s+/g, ' ').trim()), [
          '0.3 s voicemail words “leave a message”', '7.7 s beep 1000 Hz for 520 ms', '8.3 s message started', '12.1 s message ended',
        ]);
        await page.getByText('Hi Ada, this is Parley about your order.').waitFor();
        await shoot(page, 'call-answered-by');
        assert.deepEqual(b.problems, [], 'no console error, failed request or unexpected error answer');
        assert.deepEqual(violations, [], 'no serious or critical axe-core violation');
      } finally {
        await b.close();
      }
    });
  });
}
