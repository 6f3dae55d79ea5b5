/**
 * One walk through the console: the real service on loopback with the scripted LLM, real tool
 * and hook receivers, Kamailio as the registrar, a tenant, and Chromium; plus the helpers the
 * steps share. Steps run in order and build on each other (state carries ids between them).
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { Dialect } from '../../../src/db/database.ts';
import { buildTestApp, createTenant, type Tenant, type TestApp } from '../../helpers/app.ts';
import { startKamailio, type Kamailio } from '../../helpers/kamailio.ts';
import { startLlmServer, type LlmServer } from '../../calls/support/llm-server.ts';
import { startReceiver, type Receiver } from '../../calls/support/receiver.ts';
import { TestDialer } from '../../helpers/test-dialer.ts';
import { captureLooks, openBrowser, type Browser } from './browser.ts';

export const TOOL_SECRET = 'Bearer tool-secret-31f0';
export const HOOK_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
export const UUID = '[\\da-f]{8}-[\\da-f]{4}-[\\da-f]{4}-[\\da-f]{4}-[\\da-f]{12}';
export const SHOTS = join(import.meta.dirname, '../../../test-results/console');

export interface Walk {
  t: TestApp;
  tenant: Tenant;
  llm: LlmServer;
  tools: Receiver;
  hooks: Receiver;
  kamailio: Kamailio;
  /** Places the agent's task calls as each step's script says (the runner is ticked by hand). */
  dialer: TestDialer;
  b: Browser;
  page: Page;
  state: { assistantId: string; callId: string };
  /** axe-core findings of every page shot so far. */
  violations: string[];
  /** Screenshots in four looks and axe-core (when this walk takes them). */
  shoot: (name: string) => Promise<void>;
  see: (text: string | RegExp) => Promise<void>;
  nav: (name: string) => Promise<void>;
  /** A GET of the organization's API as the platform admin. */
  api: (path: string) => Promise<any>;
  /** Runs the job runner once and waits for what it started: webhook deliveries and task attempts. */
  runJobs: () => Promise<void>;
  /** Runs the outbox until the hook receiver has seen n requests (bounded: a broken run fails, it does not hang). */
  deliverUntil: (n: number) => Promise<void>;
  close: () => Promise<void>;
}

/** The scripted LLM: asks for lookup_order when the caller mentions an order, then says what the tool answered. */
function scriptLlm(llm: LlmServer): void {
  llm.respond = (body) => {
    const last = body.messages.at(-1);
    if (last.role === 'tool') return { text: `Order A-17: ${last.content}` };
    if (last.role === 'user' && /order/i.test(last.content)) return { toolCalls: [{ id: 'call_1', name: 'lookup_order', arguments: '{"orderNumber":"A-17"}' }] };
    return { text: 'Hello there.' };
  };
}

export async function startWalk(dialect: Dialect, looks: boolean): Promise<Walk> {
  const [llm, tools, hooks, kamailio] = await Promise.all([startLlmServer(), startReceiver(), startReceiver(), startKamailio()]);
  scriptLlm(llm);
  const peers = () => Promise.all([llm.close(), tools.close(), hooks.close(), kamailio.stop()]);
  const dialer = new TestDialer();
  // A retried attempt waits an hour: nothing the walk does brings it back while the pages are read.
  const env = { PARLEY_EGRESS_ALLOW: '127.0.0.0/8', OPENAI_BASE_URL: llm.baseUrl, OPENAI_API_KEY: 'test-llm-key', PARLEY_RETRY_BASE_SECONDS: '3600' };
  const t = await buildTestApp(dialect, env, { dialer }).catch(async (error: unknown) => { await peers(); throw error; });
  let tenant: Tenant;
  let b: Browser;
  try {
    tenant = await createTenant(t);
    b = await openBrowser(await t.app.listen({ port: 0, host: '127.0.0.1' }));
  } catch (error) {
    // Whatever started is stopped: a failed start leaves no registrar or browser behind.
    await t.close();
    await peers();
    throw error;
  }
  const page = b.page;
  const violations: string[] = [];
  const runJobs = async () => {
    await t.app.runner.tick();
    await t.app.runner.idle();
  };
  return {
    t, tenant, llm, tools, hooks, kamailio, dialer, b, page, violations, state: { assistantId: '', callId: '' },
    async shoot(name) {
      if (looks) violations.push(...(await captureLooks(page, SHOTS, name)));
    },
    see: (text) => page.getByText(text).first().waitFor(),
    nav: (name) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click(),
    api: async (path) => (await t.call('GET', `${tenant.orgPath}${path}`)).json(),
    runJobs,
    async deliverUntil(n) {
      // Each round runs what is due and waits for it; a delivery that is not due yet (backoff) is a bug here.
      for (let round = 0; hooks.requests.length < n; round++) {
        if (round === 5) throw new Error(`the hook receiver saw ${hooks.requests.length} requests, not ${n}`);
        await runJobs();
      }
    },
    async close() {
      await b.close();
      await t.close();
      await peers();
    },
  };
}
