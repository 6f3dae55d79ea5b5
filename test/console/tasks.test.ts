/**
 * An agent's tasks in the console (Chromium against the real service): one task created from the
 * form (the form's own checks and the API's 400s at their fields), the pause switch read from and
 * written through the API, callee names from userValues on the board, and the campaign summary
 * (by status, by outcome, per day, partial past its bound); a viewer sees all of it and no control
 * that writes. axe-core on every page shot.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { calleeName, perDay } from '../../console/src/tasks/campaign.ts';
import { checkTaskForm, plainApiMessage, type TaskForm } from '../../console/src/tasks/task-form.ts';
import { DEFAULT_CONSOLE_ROOT } from '../../src/http/console.ts';
import type { DialOutcome } from '../../src/telephony/dialer.ts';
import { ADMIN_TOKEN, buildTestApp, createApiToken, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { TestDialer } from '../helpers/test-dialer.ts';
import { captureLooks, openBrowser, type Browser } from './support/browser.ts';
import { SHOTS } from './support/walk.ts';

/** The seeded tasks: who they call, the values they carry and how their one attempt ends (none: left pending). */
const SEEDED: { targetNumber: string; userValues: Record<string, string>; outcome: DialOutcome | null }[] = [
  { targetNumber: '+4930100001', userValues: { firstName: 'Ada', last_name: 'Lovelace' }, outcome: { status: 'completed', sipCode: 200 } },
  { targetNumber: '+4930100002', userValues: { name: 'Grace Hopper' }, outcome: { status: 'busy', sipCode: 486 } },
  { targetNumber: '+4930100003', userValues: { 'Customer Name': 'Alan Turing' }, outcome: { status: 'declined', sipCode: 603 } },
  { targetNumber: '+4930100004', userValues: {}, outcome: { status: 'no_answer', sipCode: 480 } },
  { targetNumber: '+4930100005', userValues: { orderNumber: 'A-17' }, outcome: null },
];
const BULK = 505; // past the summary's bound of 500 tasks read

/** The text of each row of a table: its cells, trimmed. */
async function rows(page: Page, name: string): Promise<string[][]> {
  const table = page.getByRole('table', { name });
  await table.waitFor();
  return Promise.all((await table.getByRole('row').all()).slice(1).map(async (row) => (await row.locator('th, td').allTextContents()).map((c) => c.trim())));
}

describe('the tasks page\'s own rules', { timeout: 10_000 }, () => {
  it('takes the callee\'s name from a whole-name key, else first and last name, in any spelling of the key', () => {
    assert.equal(calleeName({ name: 'Grace Hopper', firstName: 'Ada' }), 'Grace Hopper');
    assert.equal(calleeName({ 'First Name': 'Ada', last_name: 'Lovelace' }), 'Ada Lovelace');
    assert.equal(calleeName({ surname: 'Turing' }), 'Turing');
    assert.equal(calleeName({ customer_name: '  ', firstName: 'Ada' }), 'Ada', 'a blank value names nobody');
    assert.equal(calleeName({ name: 42, orderNumber: 'A-17' }), null, 'only text, only name keys');
    assert.equal(calleeName({ name: 'x'.repeat(100) })?.length, 80);
  });

  it('checks the form all at once and builds the body the API takes', () => {
    const blank: TaskForm = { targetNumber: '', values: [{ key: '', value: '' }], allowedHoursBegin: '', allowedHours: '', onlyWeekdays: false, timezone: '', maxAttempts: '', agentVersion: '', execute: true };
    const bad = checkTaskForm({ ...blank, allowedHours: '25', values: [{ key: 'a', value: '1' }, { key: 'a', value: '2' }] });
    assert.equal(bad.body, null);
    assert.deepEqual(bad.problems, {
      targetNumber: ['Callee number is required.'],
      allowedHours: ['The window length must be a whole number from 1 to 24.'],
      allowedHoursBegin: ['Set the opening hour too, or clear the window length.'],
      'values[1]': ['“a” is used twice.'],
    });
    assert.deepEqual(checkTaskForm({ ...blank, targetNumber: '+49 (30) 123-45.67' }).problems, {}, 'separators are the API\'s business');
    assert.match(checkTaskForm({ ...blank, targetNumber: '+49 30 ABC' }).problems.targetNumber?.[0] ?? '', /^Only digits may follow the \+/);
    const good = checkTaskForm({ ...blank, targetNumber: ' +49 30 1234567 ', allowedHoursBegin: '9', allowedHours: '8', onlyWeekdays: true, timezone: 'Europe/Berlin', values: [{ key: 'name', value: 'Ada' }, { key: '', value: '' }] });
    assert.deepEqual(good.body, { targetNumber: '+49 30 1234567', execute: true, allowedHoursBegin: 9, allowedHours: 8, onlyWeekdays: true, timezone: 'Europe/Berlin', userValues: { name: 'Ada' } });
    assert.equal(plainApiMessage('must be <= 10'), 'This must be at most 10.');
  });

  it('counts tasks per UTC day: created on the day made, done and failed on the day finished', () => {
    const task = (createdAt: string, status: string, completedAt: string | null) => ({ createdAt, status, completedAt });
    assert.deepEqual(perDay([
      task('2026-11-26T23:59:00.000Z', 'COMPLETED', '2026-11-27T00:01:00.000Z'),
      task('2026-11-27T08:00:00.000Z', 'FAILED', '2026-11-27T09:00:00.000Z'),
      task('2026-11-27T08:00:00.000Z', 'CANCELLED', null),
    ]), [{ day: '2026-11-27', created: 2, completed: 1, failed: 1 }, { day: '2026-11-26', created: 1, completed: 0, failed: 0 }]);
  });
});

for (const [index, dialect] of DIALECTS.entries()) {
  describe(`an agent's tasks in the console (${dialect})`, () => {
    let t: TestApp;
    let tenant: Tenant;
    let base: string;
    let agentId: string;
    let bulkId: string;
    let formId: string;
    const dialer = new TestDialer();
    const violations: string[] = [];
    const shoot = async (page: Page, name: string) => {
      if (index === 0) violations.push(...(await captureLooks(page, SHOTS, name)));
    };
    const agent = async (name: string) => {
      const res = await t.call('POST', `${tenant.orgPath}/agents`, { body: { name } });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().data.id as string;
    };

    before(async () => {
      assert.ok(existsSync(join(DEFAULT_CONSOLE_ROOT, 'index.html')), 'the console is not built: run `npm run build:console` (scripts/test.sh does)');
      t = await buildTestApp(dialect, {}, { dialer });
      tenant = await createTenant(t);
      agentId = await agent('Reminder caller');
      const outcomes = new Map(SEEDED.map((s) => [s.targetNumber, s.outcome]));
      dialer.script = (request) => outcomes.get(request.targetNumber) ?? { status: 'completed' };
      for (const s of SEEDED) {
        const body = { targetNumber: s.targetNumber, userValues: s.userValues, maxAttempts: 1, execute: s.outcome !== null };
        const created = await t.call('POST', `${tenant.orgPath}/agents/${agentId}/tasks`, { body });
        assert.equal(created.statusCode, 201, created.body);
      }
      await t.app.runner.tick();
      await t.app.runner.idle();
      assert.equal(dialer.calls.length, 4, 'each scheduled task was dialled once');
      formId = await agent('Form caller');
      bulkId = await agent('Bulk caller');
      const tasks = Array.from({ length: BULK }, (_, i) => ({ targetNumber: `+49301${String(i).padStart(6, '0')}` }));
      const batch = await t.call('POST', `${tenant.orgPath}/agents/${bulkId}/tasks/batch`, { body: { tasks } });
      assert.equal(batch.statusCode, 201, batch.body);
      base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    });
    after(() => t?.close());

    /** Signs in with `token` in a browser of its own and goes to the agent's tasks through the navigation. */
    async function signedIn(token: string, test: (b: Browser) => Promise<void>, agentName = 'Reminder caller'): Promise<void> {
      const b = await openBrowser(base);
      try {
        const { page } = b;
        await page.goto('/console/signin');
        await page.getByLabel('API token').fill(token);
        await page.getByRole('button', { name: 'Sign in' }).click();
        if (token === ADMIN_TOKEN) {
          await page.getByLabel('Vendor').selectOption({ label: 'Acme' });
          await page.getByLabel('Organization').selectOption({ label: 'Acme main' });
        }
        await page.getByRole('heading', { name: 'Overview' }).waitFor();
        // Reached the way a person would: Agents, the agent, its Tasks.
        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Agents', exact: true }).click();
        await page.getByRole('link', { name: agentName }).click();
        await page.getByRole('link', { name: 'Tasks', exact: true }).click();
        await page.getByRole('heading', { name: `Tasks of ${agentName}` }).waitFor();
        await test(b);
        assert.deepEqual(b.problems, [], 'no console error, failed request or unexpected error answer');
        assert.deepEqual(b.unmet(), [], 'every deliberate API error happened');
      } finally {
        await b.close();
      }
    }

    it('shows callee names, pauses and resumes through the API, and sums the campaign up by status, outcome and day', () => signedIn(ADMIN_TOKEN, async ({ page }) => {
      const board = page.getByRole('region', { name: 'Tasks by status' });
      for (const name of ['Ada Lovelace', 'Grace Hopper', 'Alan Turing']) await board.getByText(name, { exact: true }).waitFor();
      const pending = page.locator('section[aria-labelledby="col-PENDING"] li.task');
      assert.equal(await pending.locator('.task-name').count(), 0, 'an orderNumber is no name');

      assert.deepEqual(await rows(page, 'Tasks by status'), [
        ['Pending (not scheduled)', '1'], ['Scheduled (waiting for its time)', '0'], ['In progress', '0'], ['Done', '1'], ['Failed', '3'], ['Cancelled', '0'], ['All', '5'],
      ]);
      await page.getByRole('table', { name: 'Finished tasks by outcome' }).waitFor();
      assert.deepEqual(await rows(page, 'Finished tasks by outcome'), [['answered', '1'], ['busy', '1'], ['declined', '1'], ['no answer', '1']]);
      // Summed over the days shown: the tasks may have been made on both sides of midnight UTC.
      const totals = [0, 0, 0];
      for (const cells of await rows(page, 'Tasks per day')) cells.slice(1).forEach((n, i) => (totals[i]! += Number(n)));
      assert.deepEqual(totals, [5, 1, 3], 'created, done, failed');
      assert.equal(await page.getByText(/^Partial/).count(), 0, 'everything was read');

      const toggle = page.getByRole('switch', { name: "Pause this agent's tasks" });
      await page.getByText('Running: tasks start when they are due.').waitFor();
      assert.equal(await toggle.isChecked(), false);
      await toggle.click();
      await page.getByText(/^Paused since .+: no new task starts; calls under way finish\.$/).waitFor();
      assert.equal((await t.call('GET', `${tenant.orgPath}/agents/${agentId}/tasks/pause`)).json().data.paused, true);
      await page.reload();
      await page.getByText(/^Paused since/).waitFor();
      assert.equal(await toggle.isChecked(), true, 'the switch shows what the API says');
      await shoot(page, 'tasks-summary');
      await toggle.click();
      await page.getByText('Running: tasks start when they are due.').waitFor();
      assert.equal((await t.call('GET', `${tenant.orgPath}/agents/${agentId}/tasks/pause`)).json().data.paused, false);
    }));

    it('creates one task from the form: its own checks first, all at once, then the API\'s 400s at their fields', () => signedIn(ADMIN_TOKEN, async (b) => {
      const { page } = b;
      const form = page.getByRole('form', { name: 'New task' });
      const number = form.getByLabel('Callee number *');
      await form.getByRole('button', { name: 'Create task' }).click();
      await form.getByText('Callee number is required.').waitFor();
      assert.equal(await number.getAttribute('aria-invalid'), 'true');

      // Every problem of one submit at once, each at its field; nothing is sent.
      await number.fill('030 123456');
      await form.getByLabel('Window opens at (hour)').fill('9');
      await form.getByLabel('Attempts at most').fill('12');
      await form.getByLabel('Value 1', { exact: true }).fill('Ada');
      await form.getByRole('button', { name: 'Create task' }).click();
      await form.getByText('Write the number in international format: a + and the country code first (e.g. +49 30 1234567).').waitFor();
      await form.getByText('Set the window length too, or clear the opening hour.').waitFor();
      await form.getByText('Attempts must be a whole number from 1 to 10.').waitFor();
      await form.getByText('Give this value a name.').waitFor();
      assert.equal(await form.getByLabel('Value 1 name').getAttribute('aria-invalid'), 'true');
      await form.getByText('Fix the fields marked above; nothing was sent.').waitFor();

      // What only the service knows: the number's length for its country, the time zone's name.
      await number.fill('+1 555 12');
      await form.getByLabel('Window opens at (hour)').fill('');
      await form.getByLabel('Attempts at most').fill('');
      await form.getByLabel('Time zone').fill('Mars/Olympus');
      await form.getByLabel('Value 1 name').fill('name');
      await form.getByLabel('Value 1', { exact: true }).fill('Margaret Hamilton');
      b.expectFailure(new RegExp(`/agents/${formId}/tasks$`), 400);
      await form.getByRole('button', { name: 'Create task' }).click();
      await form.getByText(/^This is not a possible number: wrong length for country code \+1\.$/).waitFor();
      await form.getByText('This must be a known IANA time zone name.').waitFor();
      assert.equal(await form.getByLabel('Time zone').getAttribute('aria-invalid'), 'true');
      await shoot(page, 'tasks-new-errors');

      await number.fill('+49 30 1234567');
      await form.getByLabel('Time zone').fill('Europe/Berlin');
      await form.getByLabel('Schedule now (else it waits as pending until you run it)').uncheck();
      await form.getByRole('button', { name: 'Create task' }).click();
      await form.getByText('Created a task to +49301234567 (pending).').waitFor();
      const pending = page.locator('section[aria-labelledby="col-PENDING"]');
      await pending.locator('.count').getByText('1').waitFor();
      await pending.getByText('Margaret Hamilton', { exact: true }).waitFor();
      const listed = (await t.call('GET', `${tenant.orgPath}/agents/${formId}/tasks?status=PENDING&size=1`)).json().data[0];
      assert.deepEqual([listed.targetNumber, listed.userValues, listed.timezone, listed.status], ['+49301234567', { name: 'Margaret Hamilton' }, 'Europe/Berlin', 'PENDING']);
      assert.equal(await number.inputValue(), '', 'the form starts afresh');
    }, 'Form caller'));

    it('says when the summary is partial: past 500 tasks it reads the most recently changed', () => signedIn(ADMIN_TOKEN, async ({ page }) => {
      await page.goto(`/console/agents/${bulkId}/tasks`);
      await page.getByRole('heading', { name: 'Tasks of Bulk caller' }).waitFor();
      await page.getByText(new RegExp(`^Partial: read the 500 most recently changed of ${BULK} tasks`)).waitFor();
      assert.deepEqual((await rows(page, 'Tasks by status'))[0], ['Pending (not scheduled)', String(BULK)], 'the counts by status are exact');
    }));

    it('shows a viewer the board, the pause state and the summary, and no control that writes', async () => {
      const token = await createApiToken(t, tenant.vendorId, { name: 'tasks viewer', role: 'viewer', organizationId: tenant.organizationId });
      await signedIn(token, async ({ page }) => {
        await page.getByRole('region', { name: 'Tasks by status' }).getByText('Grace Hopper').waitFor();
        await page.getByRole('status').filter({ hasText: /^(Running: tasks start when they are due\.|Paused since .+)$/ }).waitFor();
        await page.getByRole('table', { name: 'Finished tasks by outcome' }).waitFor();
        assert.equal(await page.getByRole('switch').count(), 0, 'no pause switch');
        assert.equal(await page.getByRole('form', { name: 'New task' }).count(), 0, 'no new-task form');
        assert.equal(await page.getByLabel('CSV file').count(), 0, 'no upload');
        assert.equal(await page.getByRole('button', { name: /^(Cancel|Run) task to/ }).count(), 0, 'no cancel or run');
        await shoot(page, 'tasks-viewer');
      });
      assert.deepEqual(violations, [], 'no serious or critical axe-core violation');
    });
  });
}
