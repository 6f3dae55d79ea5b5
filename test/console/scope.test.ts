/**
 * The console's vendor and organization switcher in Chromium: it offers every vendor and
 * organization however many pages the lists take, and a vendor token that may not list
 * organizations is told so and types the organization's id.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { DEFAULT_CONSOLE_ROOT } from '../../src/http/console.ts';
import { ADMIN_TOKEN, buildTestApp, createApiToken, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { openBrowser, type Browser } from './support/browser.ts';

const EXTRA = 104; // with the tenant's own: 105 of each, two pages of 100

async function signIn(page: Page, token: string): Promise<void> {
  await page.goto('/console/signin');
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

for (const dialect of DIALECTS) {
  describe(`the console's scope switcher (${dialect})`, () => {
    let t: TestApp;
    let tenant: Tenant;
    let base: string;
    before(async () => {
      assert.ok(existsSync(join(DEFAULT_CONSOLE_ROOT, 'index.html')), 'the console is not built: run `npm run build:console` (scripts/test.sh does)');
      t = await buildTestApp(dialect);
      tenant = await createTenant(t);
      for (let i = 1; i <= EXTRA; i++) {
        const name = `Z ${String(i).padStart(3, '0')}`;
        assert.equal((await t.call('POST', '/api/v1/vendors', { body: { name } })).statusCode, 201);
        assert.equal((await t.call('POST', `/api/v1/vendors/${tenant.vendorId}/organizations`, { body: { name } })).statusCode, 201);
      }
      base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    });
    after(async () => {
      await t?.close();
    });

    /** Each test in a browser of its own: nothing signed in carries over. */
    async function inBrowser(test: (b: Browser) => Promise<void>): Promise<void> {
      const b = await openBrowser(base);
      try {
        await test(b);
      } finally {
        await b.close();
      }
    }

    it('offers every vendor and organization, past the first page of each', () => inBrowser(async (b) => {
      const { page } = b;
      await signIn(page, ADMIN_TOKEN);
      const vendors = page.getByLabel('Vendor');
      await vendors.getByRole('option', { name: `Z ${EXTRA}` }).waitFor({ state: 'attached' });
      assert.equal(await vendors.getByRole('option').count(), 1 + 1 + EXTRA, '"Choose…", Acme and the others');
      await vendors.selectOption({ label: 'Acme' });
      const orgs = page.getByLabel('Organization');
      await orgs.getByRole('option', { name: `Z ${EXTRA}` }).waitFor({ state: 'attached' });
      assert.equal(await orgs.getByRole('option').count(), 1 + 1 + EXTRA);
      await orgs.selectOption({ label: `Z ${EXTRA}` });
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      await page.getByRole('img', { name: 'Calls per day by outcome' }).waitFor();
      assert.deepEqual(b.problems, []);
    }));

    it('lets a vendor token without organizations:read type the organization id', () => inBrowser(async (b) => {
      const token = await createApiToken(t, tenant.vendorId, { name: 'no org listing', permissions: ['calls:read', 'assistants:read'] });
      const { page } = b;
      await signIn(page, token);
      await page.getByText('Choose an organization above to start.').waitFor();
      assert.equal(await page.getByLabel('Organization', { exact: true }).count(), 0, 'no list it may not read');
      await page.getByText('This token may not list organizations (no organizations:read): type the id.').waitFor();
      const id = page.getByLabel('Organization id');
      await id.fill('not-an-id');
      await page.getByRole('button', { name: 'Use' }).click();
      await page.getByText('An organization id is a UUID.').waitFor();
      assert.equal(await id.getAttribute('aria-invalid'), 'true');
      await id.fill(tenant.organizationId);
      await page.getByRole('button', { name: 'Use' }).click();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Assistants' }).click();
      await page.getByText('No assistants yet.').waitFor();
      assert.deepEqual(b.problems, [], 'no request the token may not make');
    }));
  });
}
