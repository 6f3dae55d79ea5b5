import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_CONSOLE_ROOT } from '../../src/http/console.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { assistant, testCall, testRequest } from './steps/assistant.ts';
import { overviewCharts, searchAndTheme, tasks, viewer, webhooks } from './steps/operations.ts';
import { signIn, sip, strategy } from './steps/setup.ts';
import { startWalk, type Walk } from './support/walk.ts';

/** In order: each step builds on the ones before it. */
const STEPS: [string, (w: Walk) => Promise<void>][] = [
  ['sign in with the admin token and choose the organization', signIn],
  ['a strategy whose sliders follow the API ranges', strategy],
  ['SIP credentials validated against a real registrar, and a number', sip],
  ['an assistant with a tool, built with the form; the API error shows at its field', assistant],
  ['send a test tool request to the real receiver', testRequest],
  ['a text test call with a tool call, on one timeline', testCall],
  ['a failed webhook delivery, redelivered from the console', webhooks],
  ['an agent, a CSV of 100 tasks with 2 bad rows, then a good one; pause, cancel, attempts of a busy and an answered call', tasks],
  ['the overview charts what the analytics API computed: calls per day, turn latency, tools, the task funnel', overviewCharts],
  ['search, the agents list and the theme toggle', searchAndTheme],
  ['a viewer token of one organization: nothing to choose, nothing to change', viewer],
];

for (const [index, dialect] of DIALECTS.entries()) {
  describe(`the console in a browser, against the real service (${dialect})`, () => {
    let w: Walk | undefined;
    before(async () => {
      assert.ok(existsSync(join(DEFAULT_CONSOLE_ROOT, 'index.html')), 'the console is not built: run `npm run build:console` (scripts/test.sh does)');
      // Screenshots and axe-core once: the pages look the same on both databases.
      w = await startWalk(dialect, index === 0);
    });
    after(() => w?.close());

    it('walks every page: build an assistant with a tool, test it, call it, redeliver a hook, upload and run tasks, read the charts', async () => {
      const walk = w as Walk;
      for (const [name, step] of STEPS) {
        try {
          await step(walk);
        } catch (error) {
          throw new Error(`step "${name}" failed at ${walk.page.url()}: ${(error as Error).message}`, { cause: error });
        }
      }
      assert.deepEqual(walk.b.problems, [], 'no console error, failed request or unexpected error answer');
      assert.deepEqual(walk.b.unmet(), [], 'every deliberate API error happened');
      assert.deepEqual(walk.violations, [], 'no serious or critical axe-core violation');
    });
  });
}
