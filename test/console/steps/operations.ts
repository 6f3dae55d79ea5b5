// After the call: webhooks, agent tasks, the overview, search and the theme.
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { taskCsv } from '../support/csv.ts';
import { HOOK_SECRET, UUID, type Walk } from '../support/walk.ts';
import { statValue } from './setup.ts';

/** A failed webhook delivery, redelivered from the console. */
export async function webhooks(w: Walk): Promise<void> {
  const { page, hooks, shoot, see, nav, deliverUntil, state } = w;
  hooks.answer = (_r, i) => ({ status: i === 0 ? 500 : 204 });
  await deliverUntil(1);
  await nav('Webhooks');
  await page.getByRole('cell', { name: /^500 \(\d+ ms\)$/ }).waitFor();
  await page.getByRole('button', { name: /^Redeliver call_ended/ }).click();
  await see('queued');
  await deliverUntil(2);
  await page.getByRole('button', { name: 'Refresh' }).click();
  await page.locator('.badge-delivered').waitFor();
  const [first, second] = hooks.requests;
  assert.equal(second?.headers['webhook-id'], first?.headers['webhook-id'], 'a redelivery keeps the webhook-id');
  assert.equal(first?.body.data.callId, state.callId);
  // Signed with the secret typed into the console (Standard Webhooks, checked by its own library).
  const verified = new Webhook(HOOK_SECRET).verify(second?.rawBody ?? '', second?.headers as Record<string, string>) as { type: string };
  assert.equal(verified.type, 'call_ended');
  await shoot('deliveries');
}

/** An agent, a CSV of 100 tasks with 2 bad rows, then a good one; pause, cancel; attempts placed by the test dialer. */
export async function tasks(w: Walk): Promise<void> {
  const { page, b, shoot, see, nav, api, dialer, runJobs, state } = w;
  await nav('Agents');
  await page.getByRole('link', { name: 'New agent' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Reminder caller');
  await page.getByRole('button', { name: 'Create agent' }).click();
  await page.waitForURL(new RegExp(`/console/agents/${UUID}$`));
  await page.getByRole('link', { name: 'Tasks' }).click();
  await page.getByRole('heading', { name: /Tasks of/ }).waitFor();
  const tasksPath = `/agents/${page.url().split('/').at(-2)}/tasks`;

  const file = page.getByLabel('CSV file');
  await file.setInputFiles({ name: 'tasks.csv', mimeType: 'text/csv', buffer: Buffer.from(taskCsv(100, { 12: 'not-a-number', 57: '+49 900 1234567' })) });
  await see('100 tasks read');
  b.expectFailure(/\/tasks\/batch$/, 400);
  await page.getByRole('button', { name: 'Create 100 tasks' }).click();
  await see(/Row 13: targetNumber/);
  // Tasks never dial premium-rate numbers (a "(0)" trunk prefix, by contrast, is read fine).
  await see(/Row 58: targetNumber.*premium-rate/);
  await see('2 rows have errors');
  await shoot('tasks-upload-errors');
  assert.equal((await api(tasksPath)).totalElements, 0, 'all or nothing');

  await file.setInputFiles({ name: 'tasks.csv', mimeType: 'text/csv', buffer: Buffer.from(taskCsv(100, {})) });
  await page.getByRole('button', { name: 'Create 100 tasks' }).click();
  await see('Created 100 tasks.');
  await page.locator('#col-SCHEDULED .count').getByText('100').waitFor();
  const pause = page.getByRole('switch', { name: "Pause this agent's tasks" });
  await pause.click();
  await see(/^Paused since .+: no new task starts/);
  // Paused: the runner starts none of them.
  await runJobs();
  assert.equal(dialer.calls.length, 0, 'a paused agent places no call');
  await page.getByRole('button', { name: /^Cancel task to/ }).first().click();
  await page.locator('#col-CANCELLED .count').getByText('1').waitFor();
  await page.getByRole('button', { name: /^Attempts of task to/ }).first().click();
  await see('No attempts yet.');
  await pause.click();
  await see('Running: tasks start when they are due.');

  // The first call is answered and placed the walk's test call; every other line is busy (SIP 486) and retries in an hour.
  dialer.script = () => (dialer.calls.length === 1 ? { status: 'completed', sipCode: 200, callId: state.callId } : { status: 'busy', sipCode: 486 });
  await runJobs();
  assert.equal(dialer.calls.length, 99, 'every scheduled task was dialled once');
  const answered = dialer.calls[0]?.targetNumber ?? '';
  await page.reload();
  await page.locator('#col-COMPLETED .count').getByText('1').waitFor();
  await page.locator('#col-SCHEDULED .count').getByText('98').waitFor();
  const busy = page.locator('section[aria-labelledby="col-SCHEDULED"]').getByRole('button', { name: /^Attempts of task to/ }).first();
  await busy.click();
  const busyAttempt = page.getByRole('list', { name: 'Attempts' }).getByRole('listitem');
  await busyAttempt.getByText('busy', { exact: true }).waitFor();
  assert.match((await busyAttempt.textContent()) ?? '', /^#1 busy SIP 486/);
  await shoot('tasks');
  await busy.click();
  await page.getByRole('button', { name: `Attempts of task to ${answered}` }).click();
  const done = page.getByRole('list', { name: 'Attempts' }).getByRole('listitem');
  await done.getByText('completed', { exact: true }).waitFor();
  assert.match((await done.textContent()) ?? '', /^#1 completed SIP 200 · call/);
  await done.getByRole('link', { name: 'Call of attempt 1' }).click();
  await page.waitForURL(`**/console/calls/${state.callId}`);
  await see('Order A-17: shipped yesterday');
}

/** The overview draws what the analytics API computed: the test call, its turn latency and tool call, the tasks. */
export async function overviewCharts(w: Walk): Promise<void> {
  const { page, shoot, nav, api } = w;
  await nav('Overview');
  await page.getByRole('img', { name: 'Calls per day by outcome' }).waitFor();
  const { data } = await api('/analytics/overview');
  assert.equal(await statValue(w, 'turn latency, median'), `${data.turnLatency.p50Ms} ms`);
  assert.equal(await statValue(w, 'turn latency, p95'), `${data.turnLatency.p95Ms} ms`);
  assert.equal(await statValue(w, 'answered turns'), '1');
  assert.deepEqual(data.tools, { invocations: 1, errors: 0, errorRate: 0 }, 'the test request is not a call: only the call\'s tool call counts');
  assert.equal(await statValue(w, 'tool errors of 1 calls'), '0.0 %');
  assert.deepEqual(data.tasks, { pending: 0, scheduled: 98, inProgress: 0, completed: 1, failed: 0, cancelled: 1 });
  const funnel = page.getByRole('figure').filter({ hasText: 'Task completion funnel' });
  // All tasks; scheduled or further (all but the cancelled one); attempted to an end; completed.
  assert.deepEqual(await funnel.locator('.funnel-value').allTextContents(), ['100', '99', '1', '1']);
  await shoot('overview-charts');

  // The bars as a table: the day the test call ended holds it, as completed.
  const day = ((await api(`/calls/${w.state.callId}`)).data.endedAt as string).slice(0, 10);
  assert.deepEqual(data.callsPerDay.find((d: { day: string }) => d.day === day), { day, completed: 1, abandoned: 0, failed: 0 });
  await page.getByRole('region', { name: 'Calls per day' }).getByText('As a table').click();
  const row = page.getByRole('table', { name: 'Calls per day' }).getByRole('row').filter({ hasText: day });
  assert.deepEqual(await row.getByRole('cell').allTextContents(), [day, '1', '0', '0']);
}

/** Search, the agents list, the overview again and the theme toggle. */
export async function searchAndTheme(w: Walk): Promise<void> {
  const { page, shoot, see, nav } = w;
  await nav('Assistants');
  await page.getByLabel('Search by name').fill('front');
  await page.getByRole('link', { name: 'Front desk' }).waitFor();
  await page.getByLabel('Search by name').fill('zzz');
  await see('No assistants start with');
  await page.getByLabel('Search by name').fill('');
  await shoot('assistants');
  await nav('Agents');
  await page.getByRole('link', { name: 'Reminder caller' }).waitFor();
  await shoot('agents');
  await page.getByRole('button', { name: 'Dark theme' }).click();
  assert.equal(await page.evaluate('document.documentElement.dataset.theme'), 'dark');
  await page.reload();
  assert.equal(await page.evaluate('document.documentElement.dataset.theme'), 'dark', 'the choice is kept');
  await page.getByRole('button', { name: 'Light theme' }).click();
  await page.getByRole('link', { name: 'Reminder caller' }).waitFor();
}

/** A viewer token of one organization: no vendor or organization to choose, nothing offered that it may not do. */
export async function viewer(w: Walk): Promise<void> {
  const { page, b, t, tenant, see, nav } = w;
  const created = await t.call('POST', `/api/v1/vendors/${tenant.vendorId}/api-tokens`, { body: { name: 'console viewer', role: 'viewer', organizationId: tenant.organizationId } });
  const { token, id } = created.json().data as { token: string; id: string };
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  // Back where the sign-out happened.
  await page.getByRole('heading', { name: 'Agents' }).waitFor();
  assert.equal(await page.getByLabel('Vendor').count(), 0, 'only the platform admin chooses a vendor');
  const organization = page.getByLabel('Organization');
  assert.ok(await organization.isDisabled(), 'an organization token has nothing to choose');
  await organization.locator('option', { hasText: 'Acme main' }).waitFor({ state: 'attached' });
  assert.equal(await organization.locator('option:checked').textContent(), 'Acme main');
  await nav('Assistants');
  await page.getByRole('link', { name: 'Front desk' }).click();
  await see('Read only: this token may not change assistants.');
  assert.ok(await page.getByRole('button', { name: 'Save' }).isDisabled());
  assert.equal(await page.getByRole('button', { name: 'Send test request' }).count(), 0);
  await nav('Assistants');
  await page.getByRole('link', { name: 'Front desk' }).waitFor();
  assert.equal(await page.getByRole('link', { name: 'New assistant' }).count(), 0);

  // Revoked meanwhile: the next request is a 401, and the tab signs out (the token leaves sessionStorage).
  await t.call('DELETE', `/api/v1/vendors/${tenant.vendorId}/api-tokens/${id}`);
  b.expectFailure(/\/llm-generation-strategies\?/, 401);
  await nav('Strategies');
  await page.getByRole('heading', { name: 'Parley console' }).waitFor();
  assert.equal(await page.evaluate('sessionStorage.getItem("parley.token")'), null);
}
