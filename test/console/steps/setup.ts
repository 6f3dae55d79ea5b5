// Sign in, a strategy, SIP: what an assistant is built on.
import assert from 'node:assert/strict';
import { ADMIN_TOKEN } from '../../helpers/app.ts';
import { UUID, type Walk } from '../support/walk.ts';

/** Sign in with the admin token and choose the organization. */
export async function signIn(w: Walk): Promise<void> {
  const { page, shoot } = w;
  await page.goto('/');
  await page.waitForURL('**/console/signin');
  await page.getByRole('heading', { name: 'Parley console' }).waitFor();
  await shoot('signin');
  await page.getByLabel('API token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('Vendor').selectOption({ label: 'Acme' });
  await page.getByLabel('Organization').selectOption({ label: 'Acme main' });
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  // A fresh organization: the charts are there, with nothing in them yet (a later step reads them full).
  await page.getByRole('img', { name: 'Calls per day by outcome' }).waitFor();
  assert.equal(await statValue(w, 'turn latency, p95'), '—');
  await page.reload();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate('document.activeElement?.textContent'), 'Skip to content', 'the first Tab reaches the skip link');
  await shoot('overview');
  const stored = await page.evaluate<{ session: string | null; local: string }>('({ session: sessionStorage.getItem("parley.token"), local: JSON.stringify(localStorage) })');
  assert.equal(stored.session, ADMIN_TOKEN);
  assert.ok(!stored.local.includes(ADMIN_TOKEN), 'the token is never in localStorage');
  assert.ok(!page.url().includes(ADMIN_TOKEN), 'nor in the URL');
}

/** The value shown above a stat's label on the overview. */
export async function statValue(w: Walk, label: string): Promise<string | null> {
  return w.page.locator('.stat', { has: w.page.getByText(label, { exact: true }) }).locator('.stat-value').textContent();
}

/** A strategy whose sliders follow the API ranges. */
export async function strategy(w: Walk): Promise<void> {
  const { page, shoot, see, nav, api } = w;
  await nav('Strategies');
  await see('No strategies yet.');
  await page.getByRole('link', { name: 'New strategy' }).click();
  await page.getByLabel('Name').fill('Warm voice');
  const temperature = page.getByLabel('Temperature', { exact: true });
  assert.equal(await temperature.getAttribute('max'), '2', 'the range comes from the OpenAPI schema (0..2)');
  assert.equal(await page.getByLabel('Speed', { exact: true }).getAttribute('min'), '0.25');
  await page.getByLabel('Set temperature').check();
  await temperature.fill('0.4');
  await page.getByLabel('Provider').selectOption('espeak');
  await page.getByRole('button', { name: 'Create strategy' }).click();
  await page.waitForURL(new RegExp(`/console/strategies/${UUID}$`));
  await shoot('strategy');
  const [strategy] = (await api('/llm-generation-strategies')).data;
  assert.deepEqual([strategy.name, strategy.parameters.temperature, strategy.parameters.voice.provider], ['Warm voice', 0.4, 'espeak']);
  await nav('Strategies');
  await page.getByRole('link', { name: 'Warm voice' }).waitFor();
  await shoot('strategies');
}

/** SIP credentials validated against a real registrar, and a number. */
export async function sip(w: Walk): Promise<void> {
  const { page, kamailio, shoot, see, nav } = w;
  await nav('SIP');
  const form = page.getByRole('form', { name: 'New SIP credentials' });
  await form.getByLabel('Credentials name').fill('Trunk');
  await form.getByLabel('Registrar host').fill(kamailio.host);
  await form.getByLabel('Port', { exact: true }).fill(String(kamailio.udpPort));
  await form.getByLabel('User name').fill(kamailio.username);
  await form.getByLabel('Password').fill(kamailio.password);
  await form.getByRole('button', { name: 'Add credentials' }).click();
  await page.getByRole('button', { name: 'Validate Trunk' }).click();
  await see(/Registered: 200/);
  const number = page.getByRole('form', { name: 'New SIP number' });
  await number.getByLabel('Number (E.164)').fill('+49 30 1234567');
  await number.getByLabel('Number name').fill('Berlin');
  await number.getByLabel('Carried by').selectOption({ label: 'Trunk' });
  await number.getByRole('button', { name: 'Add number' }).click();
  await page.getByRole('cell', { name: '+49301234567', exact: true }).waitFor(); // not its row's Edit and Delete cell
  await shoot('sip');
}
