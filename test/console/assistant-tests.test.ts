/**
 * An assistant's tests run from the console, in Chromium against the real service: a test file
 * pasted and run in the browser as `parley test` runs it (real calls through the engine, the fake
 * OpenAI-compatible LLM playing the assistant, the caller and the judge), each test's checks,
 * verdicts and conversation reported; the tool server never called; a file that does not read
 * said in words; a viewer offered no Run.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { DEFAULT_CONSOLE_ROOT } from '../../src/http/console.ts';
import { createApiToken } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { toolSchema } from '../helpers/fixtures.ts';
import { startReceiver, type Receiver } from '../calls/support/receiver.ts';
import { startWorld, type World } from '../calls/support/world.ts';
import { captureLooks, openBrowser, type Browser } from './support/browser.ts';
import { SHOTS } from './support/walk.ts';

/** The fake LLM's answers, by who is asking (the system prompt says it). */
function script(body: any) {
  const system: string = body.messages[0]?.content ?? '';
  const last = body.messages.at(-1);
  if (system.startsWith('You judge')) {
    const passed = /shipped/.test(last.content.split('Criterion:')[1] ?? '');
    return { text: JSON.stringify({ passed, reason: passed ? 'The assistant said the order shipped.' : 'No refund was offered.' }) };
  }
  if (last.role === 'tool') return { text: `Order A-17: ${last.content}.` };
  if (/goodbye|bye/i.test(last.content ?? '')) return { toolCalls: [{ id: `end_${body.messages.length}`, name: 'end_call', arguments: '{}' }] };
  if (/A-17/.test(last.content ?? '')) return { toolCalls: [{ id: `call_${body.messages.length}`, name: 'lookup_order', arguments: '{"orderNumber":"A-17"}' }] };
  return { text: 'How can I help?' };
}

const SUITE = `assistant: Order desk
tests:
  - name: a caller gets the order's status
    caller:
      turns: ["Where is order A-17?", "Thanks, bye"]
    mocks:
      - tool: lookup_order
        arguments: { orderNumber: A-17 }
        response: { status: shipped }
    expect:
      toolsCalled: [{ tool: lookup_order, arguments: { orderNumber: A-17 } }]
      transcriptContains: [shipped]
      endedByEndCall: true
      criteria: [The assistant says the order has shipped.]
  - name: a refund is offered
    caller:
      turns: ["Where is order A-17?"]
    mocks:
      - tool: lookup_order
        response: { status: shipped }
    expect:
      toolsNotCalled: [lookup_order]
      criteria: [The assistant offers a refund.]
`;

async function signIn(page: Page, token: string): Promise<void> {
  await page.goto('/console/signin');
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}

for (const [index, dialect] of DIALECTS.entries()) {
  describe(`the console runs an assistant's tests (${dialect})`, { timeout: 300_000 }, () => {
    let w: World;
    let tools: Receiver;
    let assistantId: string;
    let editor: string;

    before(async () => {
      assert.ok(existsSync(join(DEFAULT_CONSOLE_ROOT, 'index.html')), 'the console is not built: run `npm run build:console` (scripts/test.sh does)');
      w = await startWorld(dialect);
      w.llm.respond = script;
      tools = await startReceiver();
      assistantId = await w.createAssistant({
        name: 'Order desk', systemPrompt: 'You are the order desk of Acme.', systemPromptGreeting: 'Acme orders, hello.',
        extensions: [
          { type: 'tool_webhook', parameters: { name: 'lookup_order', serverUrl: tools.url, schema: toolSchema('lookup_order') } },
          { type: 'end_call', parameters: {} },
        ],
      });
      editor = await createApiToken(w.t, w.tenant.vendorId, { role: 'editor', organizationId: w.tenant.organizationId });
    });
    after(async () => {
      await w?.close();
      await tools?.close();
    });

    async function inBrowser(test: (b: Browser) => Promise<void>): Promise<void> {
      const b = await openBrowser(w.address);
      try {
        await test(b);
        assert.deepEqual(b.problems, [], 'no console error, failed request or unexpected error answer');
      } finally {
        await b.close();
      }
    }

    it('runs a pasted file: each test passed or failed, its checks with verdicts and reasons, the conversation; no tool server called', () => inBrowser(async ({ page }) => {
      await signIn(page, editor);
      await page.goto(`/console/assistants/${assistantId}`);
      await page.getByRole('link', { name: 'Tests' }).click();
      await page.getByRole('heading', { name: 'Tests of Order desk' }).waitFor();
      await page.getByLabel('Test file (YAML)').fill(SUITE);
      await page.getByRole('button', { name: 'Run' }).click();
      await page.getByText('2 tests: 1 passed, 1 failed.').waitFor({ timeout: 120_000 });

      const passed = page.getByRole('region', { name: "Test: a caller gets the order's status" });
      await passed.getByRole('heading', { name: "✓ Passed: a caller gets the order's status" }).waitFor();
      await passed.getByText('ok: judged: The assistant says the order has shipped. — The assistant said the order shipped.').waitFor();
      // A passed test's conversation is folded: opened, it reads in order.
      await passed.getByText(/^Conversation \(\d+ lines\)$/).click();
      await passed.getByText('Caller: Thanks, bye').waitFor();

      const failed = page.getByRole('region', { name: 'Test: a refund is offered' });
      await failed.getByRole('heading', { name: '✗ Failed: a refund is offered' }).waitFor();
      await failed.getByText('FAILED: did not call lookup_order — called lookup_order {"orderNumber":"A-17"}').waitFor();
      await failed.getByText('FAILED: judged: The assistant offers a refund. — No refund was offered.').waitFor();
      // The conversation is open on a failed test: the greeting came before the caller spoke.
      assert.deepEqual((await failed.getByRole('listitem').filter({ hasText: /^(Caller|Assistant):/ }).allTextContents()).slice(0, 2),
        ['Assistant: Acme orders, hello.', 'Caller: Where is order A-17?']);
      assert.equal(tools.requests.length, 0, 'no request reached the real tool server');
      if (index === 0) assert.deepEqual(await captureLooks(page, SHOTS, 'assistant-tests'), [], 'no serious or critical axe-core violation');
    }));

    it('says in words why a file cannot run, and runs nothing', () => inBrowser(async ({ page }) => {
      await signIn(page, editor);
      await page.goto(`/console/assistants/${assistantId}/tests`);
      const calls = w.llm.requests.length;
      await page.getByLabel('Test file (YAML)').fill('assistant: Order desk\ntests:\n  - name: x\n    caller: { turns: [hi] }\n    expect: { toolCalled: [] }\n');
      await page.getByRole('button', { name: 'Run' }).click();
      await page.getByRole('alert').getByText('The test file: tests.0.expect.toolCalled: is not a field of a test file').waitFor();
      await page.getByLabel('Test file (YAML)').fill(SUITE.replace('Order desk', 'Front desk'));
      await page.getByRole('button', { name: 'Run' }).click();
      await page.getByRole('alert').getByText('The test file tests the assistant "Front desk"; this page is the assistant "Order desk".', { exact: false }).waitFor();
      assert.equal(w.llm.requests.length, calls, 'no call was made');
    }));

    it('offers a viewer no Run', () => inBrowser(async ({ page }) => {
      const viewer = await createApiToken(w.t, w.tenant.vendorId, { role: 'viewer', organizationId: w.tenant.organizationId });
      await signIn(page, viewer);
      await page.goto(`/console/assistants/${assistantId}/tests`);
      await page.getByText('Running tests needs calls:write and assistants:write.').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Run' }).count(), 0);
    }));
  });
}
