/**
 * An assistant's history in the console, in Chromium against the real service: the versions
 * with who made them, the differences between two, and a restore asked twice that brings back
 * the old configuration, secrets included; a viewer sees the history and no restore.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { DEFAULT_CONSOLE_ROOT } from '../../src/http/console.ts';
import { readJson } from '../../src/db/values.ts';
import type { StoredExtension } from '../../src/modules/assistants/items.ts';
import { ADMIN_TOKEN, buildTestApp, createApiToken, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { toolWebhook } from '../helpers/fixtures.ts';
import { until } from '../helpers/until.ts';
import { captureLooks, openBrowser, type Browser } from './support/browser.ts';
import { SHOTS } from './support/walk.ts';

async function signIn(page: Page, token: string, pick: boolean): Promise<void> {
  await page.goto('/console/signin');
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  if (pick) {
    await page.getByLabel('Vendor').selectOption({ label: 'Acme' });
    await page.getByLabel('Organization').selectOption({ label: 'Acme main' });
  }
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}

for (const [index, dialect] of DIALECTS.entries()) {
  describe(`the console's assistant history: diff and restore (${dialect})`, () => {
    let t: TestApp;
    let tenant: Tenant;
    let base: string;
    let deployer: string;
    const violations: string[] = [];
    // Screenshots and axe-core once: the pages look the same on both databases.
    const shoot = async (page: Page, name: string) => {
      if (index === 0) violations.push(...(await captureLooks(page, SHOTS, name)));
    };

    before(async () => {
      assert.ok(existsSync(join(DEFAULT_CONSOLE_ROOT, 'index.html')), 'the console is not built: run `npm run build:console` (scripts/test.sh does)');
      t = await buildTestApp(dialect);
      tenant = await createTenant(t);
      deployer = await createApiToken(t, tenant.vendorId, { name: 'ci-deployer', role: 'editor', organizationId: tenant.organizationId });
      base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    });

    /** An assistant made by the ci-deployer token (version 1), then changed by the admin: a prompt line and a header value (version 2). */
    async function twoVersions(name: string): Promise<{ item: string; id: string }> {
      const body = {
        name,
        systemPrompt: 'You are the front desk of Acme.\nBe brief.\nNever promise a refund.',
        systemPromptGreeting: 'Hello, how can I help?',
        llmAudioContentGenerationStrategyId: null,
        extensions: [toolWebhook('lookup_order')],
        callEventHooks: [],
      };
      const created = await t.call('POST', `${tenant.orgPath}/assistants`, { body, token: deployer });
      assert.equal(created.statusCode, 201, created.body);
      const item = created.headers.location as string;
      const changed = { ...body, systemPrompt: 'You are the front desk of Acme.\nBe warm and chatty.\nNever promise a refund.', extensions: [toolWebhook('lookup_order', { headers: { Authorization: 'Bearer rotated-token' } })] };
      const put = await t.call('PUT', item, { body: changed });
      assert.equal(put.statusCode, 200, put.body);
      return { item, id: created.json().data.id };
    }

    /** The version, author and summary cells of each row of the versions table. */
    async function versionRows(page: Page): Promise<string[][]> {
      const rows = page.getByRole('region', { name: 'Versions' }).getByRole('row');
      const out: string[][] = [];
      for (let i = 1; i < (await rows.count()); i++) {
        const cells = await rows.nth(i).getByRole('cell').allTextContents();
        out.push([cells[0] ?? '', cells[2] ?? '', cells[3] ?? ''].map((c) => c.replace(/\s+/g, ' ').trim()));
      }
      return out;
    }
    /** Waits for the rows to read `expected` (or to begin with it): the current version's badge comes from a second request, which may answer after the rows are drawn. */
    async function expectRows(page: Page, expected: string[][], only = true): Promise<void> {
      await until('the version rows', () => versionRows(page), (rows) => isDeepStrictEqual(only ? rows : rows.slice(0, expected.length), expected));
    }
    after(async () => {
      await t?.close();
    });

    async function inBrowser(test: (b: Browser) => Promise<void>): Promise<void> {
      const b = await openBrowser(base);
      try {
        await test(b);
        assert.deepEqual(b.problems, [], 'no console error, failed request or unexpected error answer');
      } finally {
        await b.close();
      }
    }

    it('walks the history, shows the differences and restores version 1 with its secrets', () => inBrowser(async (b) => {
      const { item, id } = await twoVersions('Front desk');
      const { page } = b;
      await signIn(page, ADMIN_TOKEN, true);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Assistants', exact: true }).click();
      await page.getByRole('link', { name: 'Front desk' }).click();
      await page.getByRole('link', { name: 'History' }).click();
      await page.getByRole('heading', { name: 'History of Front desk' }).waitFor();
      await expectRows(page, [['2 current', '—', 'systemPrompt, extensions changed'], ['1', 'ci-deployer', 'created']]);

      // By default the two newest: the prompt's changed line, and the tool whose header value alone changed.
      const differences = page.getByRole('region', { name: 'Differences' });
      await differences.getByText('From version 1 to version 2: 2 fields differ.').waitFor();
      const prompt = differences.getByRole('region', { name: 'Changes to systemPrompt' });
      assert.deepEqual(await prompt.locator('del').allTextContents(), ['- Be brief.']);
      assert.deepEqual(await prompt.locator('ins').allTextContents(), ['+ Be warm and chatty.']);
      // The tool was sent again without its id, so it is a new item; its new header value reads as ******** in both.
      const tool = differences.getByRole('region', { name: 'Changes to extensions' });
      assert.deepEqual((await tool.locator('ins, del').allTextContents()).map((line) => line.replace(/"[\da-f-]{36}"/, 'ID').replace(/\s+/g, ' ')), ['- "id": ID,', '+ "id": ID,']);
      await shoot(page, 'history');

      await differences.getByLabel('From version').selectOption('2');
      await differences.getByText('No differences: version 2 has the configuration of version 2.').waitFor();

      await page.getByRole('button', { name: 'Restore version 1' }).click();
      const ask = page.getByRole('group', { name: 'Restore version 1?' });
      await ask.getByRole('button', { name: 'Restore version 1 now' }).click();
      await page.getByText('Restored version 1 as version 3.').waitFor();
      await differences.getByText('No differences: version 3 has the configuration of version 1.').waitFor();
      await expectRows(page, [['3 current', '—', 'restored version 1: systemPrompt, extensions changed']], false);

      const current = (await t.call('GET', item)).json().data;
      assert.equal(current.systemPrompt, 'You are the front desk of Acme.\nBe brief.\nNever promise a refund.');
      const row = await t.db.kysely.selectFrom('assistants').select('extensions').where('id', '=', id).executeTakeFirstOrThrow();
      const header = (readJson<StoredExtension[]>(row.extensions)[0]?.parameters.headers as Record<string, string>).Authorization as string;
      assert.equal(t.ctx.secrets.open(header), 'Bearer webhook-token-lookup_order', 'the header value version 1 had');
      assert.equal(await page.getByRole('button', { name: 'Restore version 3' }).count(), 0, 'the current version is not offered');
      assert.deepEqual(violations, [], 'no serious or critical axe-core violation');
    }));

    it('shows a viewer the history and offers no restore', () => inBrowser(async (b) => {
      const { id } = await twoVersions('Back office');
      const viewer = await createApiToken(t, tenant.vendorId, { name: 'viewer', role: 'viewer', organizationId: tenant.organizationId });
      const { page } = b;
      await signIn(page, viewer, false);
      await page.goto(`/console/assistants/${id}/history`);
      await expectRows(page, [['2 current', '—', 'systemPrompt, extensions changed'], ['1', 'ci-deployer', 'created']]);
      await page.getByRole('button', { name: 'Compare version 1 with the current one' }).click();
      await page.getByRole('region', { name: 'Differences' }).getByText('From version 1 to version 2').waitFor();
      assert.equal(await page.getByRole('button', { name: /^Restore/ }).count(), 0);
    }));
  });
}
