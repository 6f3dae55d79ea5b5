/**
 * Administration in the console, in Chromium against the real service: organizations created
 * and renamed (the picker follows), API tokens created with a role and an expiry, shown once,
 * copied and revoked (the API's expiry rule shown at its field), SIP credentials and numbers
 * edited, validated again against Kamailio and deleted (the API's 409 in words), and a viewer
 * that is offered none of it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { DEFAULT_CONSOLE_ROOT } from '../../src/http/console.ts';
import { ADMIN_TOKEN, buildTestApp, createApiToken, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { startKamailio, type Kamailio } from '../helpers/kamailio.ts';
import { captureLooks, openBrowser, type Browser } from './support/browser.ts';
import { SHOTS, UUID } from './support/walk.ts';

const DAY = 24 * 3600_000;

/** A datetime-local value (the browser's local time, which is this process's) for an instant. */
function localInput(at: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}`;
}

for (const [index, dialect] of DIALECTS.entries()) {
  describe(`the console's administration: organizations, API tokens, SIP changes (${dialect})`, () => {
    let t: TestApp;
    let tenant: Tenant;
    let kamailio: Kamailio;
    let base: string;
    const violations: string[] = [];

    before(async () => {
      assert.ok(existsSync(join(DEFAULT_CONSOLE_ROOT, 'index.html')), 'the console is not built: run `npm run build:console` (scripts/test.sh does)');
      kamailio = await startKamailio();
      t = await buildTestApp(dialect, { PARLEY_EGRESS_ALLOW: '127.0.0.0/8' });
      tenant = await createTenant(t);
      base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    });
    after(async () => {
      await t?.close();
      await kamailio?.stop();
      assert.deepEqual(violations, [], 'no serious or critical axe-core violation');
    });

    /** Each test in a browser of its own: nothing signed in carries over. */
    async function inBrowser(test: (b: Browser, page: Page) => Promise<void>): Promise<void> {
      const b = await openBrowser(base);
      try {
        await test(b, b.page);
        assert.deepEqual(b.problems, [], 'no console error and no answer the test did not provoke');
        assert.deepEqual(b.unmet(), [], 'every error the test provoked came');
      } finally {
        await b.close();
      }
    }
    // Screenshots and axe-core once: the pages look the same on both databases.
    const shoot = async (page: Page, name: string) => {
      if (index === 0) violations.push(...(await captureLooks(page, SHOTS, name)));
    };
    const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();
    const picker = (page: Page) => page.getByLabel('Organization', { exact: true });

    async function signIn(page: Page, token: string, pick?: { organization?: string }): Promise<void> {
      await page.goto('/console/signin');
      await page.getByLabel('API token').fill(token);
      await page.getByRole('button', { name: 'Sign in' }).click();
      if (pick) {
        await page.getByLabel('Vendor').selectOption({ label: 'Acme' });
        if (pick.organization) await picker(page).selectOption({ label: pick.organization });
      }
    }

    it('creates and renames an organization before one is chosen, and the picker follows', () => inBrowser(async (b, page) => {
      await signIn(page, ADMIN_TOKEN, {});
      await page.getByText('Choose an organization above to start.').waitFor();
      await nav(page, 'Organizations');
      await page.getByRole('heading', { name: 'Organizations', exact: true }).waitFor();
      const form = page.getByRole('form', { name: 'New organization' });
      await form.getByRole('button', { name: 'Create organization' }).click();
      await form.getByText('Name is required.').waitFor();
      assert.equal(await form.getByLabel('Organization name').getAttribute('aria-invalid'), 'true');

      await form.getByLabel('Organization name').fill('Acme north');
      await form.getByRole('button', { name: 'Create organization' }).click();
      await form.getByText('Created Acme north').waitFor();
      await page.getByRole('cell', { name: 'Acme north', exact: true }).waitFor();
      await picker(page).getByRole('option', { name: 'Acme north' }).waitFor({ state: 'attached' });

      await page.getByRole('button', { name: 'Rename Acme north' }).click();
      const rename = page.getByRole('form', { name: 'Rename Acme north' });
      await rename.getByLabel('New name').fill('Acme south');
      await rename.getByRole('button', { name: 'Save name' }).click();
      await page.getByRole('cell', { name: 'Acme south', exact: true }).waitFor();
      await picker(page).getByRole('option', { name: 'Acme south' }).waitFor({ state: 'attached' });
      assert.equal(await picker(page).getByRole('option', { name: 'Acme north' }).count(), 0, 'the picker reads the list again');
      const listed = (await t.call('GET', `/api/v1/vendors/${tenant.vendorId}/organizations`)).json().data as { name: string }[];
      assert.deepEqual(listed.map((o) => o.name).sort(), ['Acme main', 'Acme south']);

      // The renamed organization is chosen like any other, and the page stays.
      await picker(page).selectOption({ label: 'Acme south' });
      await page.getByRole('button', { name: 'Rename Acme main' }).waitFor();
      await shoot(page, 'organizations');
    }));

    it('creates an API token with a role, shows it once with a copy button, and revokes it', () => inBrowser(async (b, page) => {
      await b.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
      await signIn(page, ADMIN_TOKEN, { organization: 'Acme main' });
      await nav(page, 'API tokens');
      const form = page.getByRole('form', { name: 'New API token' });
      await form.getByLabel('Role').locator('option', { hasText: 'editor' }).waitFor({ state: 'attached' });

      // An expiry in the past: the API's 400 at the field.
      await form.getByLabel('Token name').fill('too late');
      await form.getByLabel('Expires').fill('2001-01-01T09:00');
      b.expectFailure(/\/api-tokens$/, 400);
      await form.getByRole('button', { name: 'Create token' }).click();
      await form.getByText('must be in the future', { exact: true }).waitFor();
      assert.equal(await form.getByLabel('Expires').getAttribute('aria-invalid'), 'true');

      await form.getByLabel('Token name').fill('ci-viewer');
      await form.getByLabel('Role').selectOption('viewer');
      await form.getByLabel('Scope').selectOption({ label: 'Only Acme main' });
      const expires = new Date(Date.now() + 30 * DAY);
      await form.getByLabel('Expires').fill(localInput(expires));
      await form.getByRole('button', { name: 'Create token' }).click();
      await page.getByText('Copy it now: you will not see it again.').waitFor();
      const value = await page.getByLabel('The new token').inputValue();
      assert.match(value, /^prl_/);
      await page.getByRole('button', { name: 'Copy', exact: true }).click();
      await page.getByText('Copied to the clipboard.').waitFor();
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), value);

      const me = await t.call('GET', '/api/v1/me', { token: value });
      assert.equal(me.statusCode, 200);
      assert.equal(me.json().data.role, 'viewer');
      assert.equal(me.json().data.organizationId, tenant.organizationId);
      const stored = (await t.call('GET', `/api/v1/vendors/${tenant.vendorId}/api-tokens/${me.json().data.tokenId}`)).json().data;
      // The minute the form was given, as an instant.
      assert.equal(Date.parse(stored.expiresAt), new Date(localInput(expires)).getTime());
      await shoot(page, 'api-token-created');

      await page.getByRole('button', { name: 'Done, I have copied it' }).click();
      assert.equal(await page.getByLabel('The new token').count(), 0, 'never shown again');
      const row = page.getByRole('row').filter({ has: page.getByRole('cell', { name: 'ci-viewer', exact: true }) });
      await row.getByRole('cell', { name: 'Active' }).waitFor();
      assert.ok((await row.textContent())?.includes(stored.prefix), 'the start of the token, to recognise it');
      assert.ok((await row.textContent())?.includes('Acme main'));
      assert.equal(await page.getByText(value).count(), 0, 'the secret is nowhere on the page');

      await row.getByRole('button', { name: 'Revoke ci-viewer' }).click();
      await page.getByRole('group', { name: 'Revoke ci-viewer?' }).getByRole('button', { name: 'Revoke ci-viewer now' }).click();
      await row.getByText(/^Revoked /).waitFor();
      assert.equal((await t.call('GET', '/api/v1/me', { token: value })).statusCode, 401);
      await shoot(page, 'api-tokens');
    }));

    it('a token that expires makes only tokens that expire no later, and offers only roles it holds', () => inBrowser(async (b, page) => {
      const limit = new Date(Date.now() + 2 * DAY);
      // Every :read there is (the platform admin holds them all) and tokens:write: a viewer's, and no more.
      const reads = ((await t.call('GET', '/api/v1/me')).json().data.permissions as string[]).filter((p) => p.endsWith(':read'));
      const token = await createApiToken(t, tenant.vendorId, {
        name: 'short-lived', permissions: [...reads, 'tokens:write'], organizationId: tenant.organizationId, expiresAt: limit.toISOString(),
      });
      await signIn(page, token);
      await nav(page, 'API tokens');
      const form = page.getByRole('form', { name: 'New API token' });
      await form.getByLabel('Role').locator('option', { hasText: 'editor' }).waitFor({ state: 'attached' });
      assert.ok(await form.getByLabel('Role').locator('option', { hasText: 'editor' }).isDisabled(), 'editor grants more than this token holds');
      assert.ok(await form.getByLabel('Role').locator('option', { hasText: 'admin' }).isDisabled());
      assert.equal(await form.getByLabel('Scope').count(), 0, 'an organization token makes tokens of its organization only');
      await form.getByText('Narrowed to this token').waitFor();
      await form.getByText(/^Required: your token expires /).waitFor();

      await form.getByLabel('Token name').fill('forever');
      b.expectFailure(/\/api-tokens$/, 400);
      await form.getByRole('button', { name: 'Create token' }).click();
      await form.getByText(/must be set, at or before .* \(when your token expires\)/).waitFor();
      assert.equal(await form.getByLabel('Expires').getAttribute('aria-invalid'), 'true');
      await shoot(page, 'api-token-expiry-error');

      await form.getByLabel('Expires').fill(localInput(new Date(Date.now() + DAY)));
      await form.getByRole('button', { name: 'Create token' }).click();
      await page.getByText('Copy it now: you will not see it again.').waitFor();
      await page.getByRole('button', { name: 'Done, I have copied it' }).click();
      const row = page.getByRole('row').filter({ has: page.getByRole('cell', { name: 'forever', exact: true }) });
      await row.getByRole('cell', { name: 'Active' }).waitFor();
      assert.ok(!(await row.textContent())?.includes('never'), 'it expires');
      await page.getByRole('row').filter({ hasText: 'the token you are signed in with' }).filter({ hasText: 'short-lived' }).waitFor();
    }));

    it('edits SIP credentials and numbers, validates again, and says why a delete is refused', () => inBrowser(async (b, page) => {
      const credentials = await t.call('POST', `${tenant.orgPath}/sip/credentials`, {
        body: { name: 'Edge trunk', hostname: kamailio.host, port: kamailio.udpPort, username: kamailio.username, password: kamailio.password },
      });
      assert.equal(credentials.statusCode, 201, credentials.body);
      const sipCredentialId = credentials.json().data.id as string;
      const used = await t.call('POST', `${tenant.orgPath}/sip/numbers`, { body: { number: '+49 30 5550001', name: 'Desk line', sipCredentialId } });
      const spare = await t.call('POST', `${tenant.orgPath}/sip/numbers`, { body: { number: '+49 30 5550002', name: 'Spare line', sipCredentialId } });
      assert.equal(spare.statusCode, 201, spare.body);
      const assistant = await t.call('POST', `${tenant.orgPath}/assistants`, {
        body: {
          name: 'Front desk', systemPrompt: 'You are the front desk.', systemPromptGreeting: 'Hello.', llmAudioContentGenerationStrategyId: null,
          extensions: [], callEventHooks: [], telephoneNumberId: used.json().data.id,
        },
      });
      assert.equal(assistant.statusCode, 201, assistant.body);

      await signIn(page, ADMIN_TOKEN, { organization: 'Acme main' });
      await nav(page, 'SIP');
      // A wrong password: the registrar refuses it when validated again.
      await page.getByRole('button', { name: 'Edit Edge trunk' }).click();
      let edit = page.getByRole('form', { name: 'Edit Edge trunk' });
      assert.equal(await edit.getByLabel('Registrar host').inputValue(), kamailio.host, 'the form starts from what is stored');
      assert.equal(await edit.getByLabel('Password').inputValue(), '', 'the password is write-only');
      await edit.getByLabel('Password').fill('not-the-password');
      await edit.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('button', { name: 'Validate Edge trunk' }).click();
      await page.getByText(/Refused: \d{3}/).waitFor();

      await page.getByRole('button', { name: 'Edit Edge trunk' }).click();
      edit = page.getByRole('form', { name: 'Edit Edge trunk' });
      await edit.getByLabel('Password').fill(kamailio.password);
      await edit.getByLabel('Max agent tasks').fill('3');
      await edit.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('cell', { name: '3', exact: true }).waitFor();
      assert.equal(await page.getByText(/Refused: \d{3}/).count(), 0, 'the old answer goes with the change');
      await page.getByRole('button', { name: 'Validate Edge trunk' }).click();
      await page.getByText('Registered: 200').waitFor();
      const stored = (await t.call('GET', `${tenant.orgPath}/sip/credentials/${sipCredentialId}`)).json().data;
      assert.equal(stored.maxAgentTasks, 3);

      // Deletes the API refuses: said in words, nothing deleted.
      b.expectFailure(new RegExp(`/sip/credentials/${UUID}$`), 409);
      await page.getByRole('button', { name: 'Delete Edge trunk' }).click();
      await page.getByRole('button', { name: 'Delete Edge trunk for good' }).click();
      await page.getByText(/Not deleted: The SIP number \+4930555000\d uses these credentials\. Delete that number/).waitFor();
      b.expectFailure(new RegExp(`/sip/numbers/${UUID}$`), 409);
      await page.getByRole('button', { name: 'Delete +49305550001' }).click();
      await page.getByRole('group', { name: 'Delete +49305550001?' }).getByRole('button', { name: 'Delete +49305550001 for good' }).click();
      await page.getByText('Not deleted: The assistant "Front desk" uses this number. Give it another number').waitFor();
      await shoot(page, 'sip-changes');

      await page.getByRole('button', { name: 'Edit +49305550002' }).click();
      const number = page.getByRole('form', { name: 'Edit +49305550002' });
      await number.getByLabel('Number name').fill('Spare desk');
      await number.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('cell', { name: 'Spare desk' }).waitFor();
      await page.getByRole('button', { name: 'Delete +49305550002' }).click();
      await page.getByRole('button', { name: 'Delete +49305550002 for good' }).click();
      await page.getByRole('cell', { name: '+49305550001', exact: true }).waitFor();
      await page.getByRole('cell', { name: '+49305550002', exact: true }).waitFor({ state: 'detached' });
      assert.equal((await t.call('GET', `${tenant.orgPath}/sip/numbers/${spare.json().data.id}`)).statusCode, 404);
      assert.equal((await t.call('GET', `${tenant.orgPath}/sip/credentials/${sipCredentialId}`)).statusCode, 200, 'the refused delete changed nothing');
    }));

    it('offers a viewer no write control, and a token without the permissions no page', () => inBrowser(async (b, page) => {
      const credentials = await t.call('POST', `${tenant.orgPath}/sip/credentials`, {
        body: { name: 'Viewer trunk', hostname: kamailio.host, port: kamailio.udpPort, username: kamailio.username, password: kamailio.password },
      });
      assert.equal(credentials.statusCode, 201, credentials.body);
      const number = await t.call('POST', `${tenant.orgPath}/sip/numbers`, { body: { number: '+49 30 5550009', sipCredentialId: credentials.json().data.id } });
      assert.equal(number.statusCode, 201, number.body);
      const viewer = await createApiToken(t, tenant.vendorId, { name: 'console viewer', role: 'viewer', organizationId: tenant.organizationId });

      await signIn(page, viewer);
      await nav(page, 'SIP');
      await page.getByRole('region', { name: 'SIP credentials' }).getByRole('cell', { name: 'Viewer trunk' }).waitFor();
      await page.getByRole('cell', { name: '+49305550009', exact: true }).first().waitFor(); // its name is the number too
      for (const name of [/^Validate /, /^Edit /, /^Delete /, 'Add credentials', 'Add number']) {
        assert.equal(await page.getByRole('button', { name }).count(), 0, `no ${String(name)} button`);
      }
      await nav(page, 'API tokens');
      await page.getByRole('cell', { name: 'console viewer' }).waitFor();
      assert.equal(await page.getByRole('form', { name: 'New API token' }).count(), 0);
      assert.equal(await page.getByRole('button', { name: /^Revoke/ }).count(), 0);
      await nav(page, 'Organizations');
      await page.getByRole('region', { name: 'Organizations' }).getByRole('cell', { name: 'Acme main' }).waitFor();
      assert.equal(await page.getByRole('button', { name: /^Rename/ }).count(), 0);
      assert.equal(await page.getByRole('form', { name: 'New organization' }).count(), 0);

      // Without tokens:read and organizations:read, the pages are not offered at all.
      const sipOnly = await createApiToken(t, tenant.vendorId, { name: 'sip only', permissions: ['sip:read'], organizationId: tenant.organizationId });
      await page.getByRole('button', { name: 'Sign out' }).click();
      await signIn(page, sipOnly);
      await nav(page, 'SIP');
      await page.getByRole('region', { name: 'SIP credentials' }).getByRole('cell', { name: 'Viewer trunk' }).waitFor();
      const links = page.getByRole('navigation', { name: 'Main' });
      assert.equal(await links.getByRole('link', { name: 'API tokens' }).count(), 0);
      assert.equal(await links.getByRole('link', { name: 'Organizations' }).count(), 0);
    }));
  });
}
