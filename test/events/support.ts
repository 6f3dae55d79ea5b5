import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Tenant, TestApp } from '../helpers/app.ts';
import type { Context } from '../../src/context.ts';
import { createEgress } from '../../src/egress/client.ts';
import { parseAllowList } from '../../src/egress/policy.ts';
import { Runner } from '../../src/jobs/runner.ts';
import { DELIVERY_JOB, deliveryJobs } from '../../src/modules/events/deliveries.jobs.ts';
import { enqueueEvent, type OutboxEvent } from '../../src/modules/events/outbox.ts';

export const EGRESS_ENV = { PARLEY_EGRESS_ALLOW: '127.0.0.0/8' };
export const WHSEC = `whsec_${Buffer.from('a test signing key of 32 bytes!!').toString('base64')}`;

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The status this receiver decided to answer with. */
  status: number;
}

/** What the receiver answers: a status, or a promise of one (to hold a request open). */
export type Decide = (n: number, req: { path: string; body: string }) => number | Promise<number>;

/** A real HTTP receiver on 127.0.0.1 that records every request it answers. */
export async function startReceiver(decide: Decide = () => 200) {
  const received: Received[] = [];
  let count = 0;
  const state = { decide };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = req.url ?? '/';
      void Promise.resolve(state.decide(count++, { path, body })).then((status) => {
        // Recorded once decided, as a receiver that acts on a request before answering it would.
        received.push({ path, headers: req.headers, body, status });
        if (status >= 300 && status < 400) res.setHeader('location', `${url}/moved`);
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end('ok');
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    set decide(d: Decide) {
      state.decide = d;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface HookSpec {
  type: string;
  url: string;
  secret: string;
  id?: string;
}

/** An assistant (or agent) with these call event hooks; returns its id and the hook ids in order. */
export async function sourceWithHooks(t: TestApp, a: Tenant, hooks: HookSpec[], plural: 'assistants' | 'agents' = 'assistants') {
  const res = await t.call('POST', `${a.orgPath}/${plural}`, {
    body: { name: 'Front desk', callEventHooks: hooks.map((h) => ({ type: h.type, parameters: { url: h.url, secret: h.secret } })) },
  });
  assert.equal(res.statusCode, 201, res.body);
  const data = res.json().data;
  return { id: data.id as string, url: `${a.orgPath}/${plural}/${data.id}`, hookIds: data.callEventHooks.map((h: { id: string }) => h.id) as string[] };
}

/** PUT the hooks of a source (ids kept where given: a changed secret is a rotation). */
export async function putHooks(t: TestApp, url: string, hooks: HookSpec[]) {
  const res = await t.call('PUT', url, {
    body: { name: 'Front desk', systemPrompt: null, systemPromptGreeting: null, llmAudioContentGenerationStrategyId: null, extensions: [], callEventHooks: hooks.map((h) => ({ id: h.id ?? null, type: h.type, parameters: { url: h.url, secret: h.secret } })) },
  });
  assert.equal(res.statusCode, 200, res.body);
}

export function enqueue(t: TestApp, event: OutboxEvent, now: Date = t.ctx.clock.now()): Promise<void> {
  return t.db.kysely.transaction().execute((trx) => enqueueEvent(trx, event, now));
}

/** Ticks until nothing more is due or reclaimable at the current clock time. */
export async function drain(t: TestApp, runner: Runner = t.app.runner): Promise<number> {
  let claimed = 0;
  for (;;) {
    const result = await runner.tick();
    await runner.idle();
    const got = result.claimed[DELIVERY_JOB] ?? 0;
    claimed += got;
    if (got === 0 && (result.reclaimed[DELIVERY_JOB] ?? 0) === 0) return claimed;
  }
}

/**
 * A runner of webhook deliveries alone, beside the app's (another worker process, as it were),
 * optionally with its own request timeout or egress allow list.
 */
export function deliveryRunner(t: TestApp, options: { timeoutMs?: number; allow?: string; pollMs?: number } = {}): Runner & { closeEgress(): Promise<void> } {
  const own = options.allow === undefined ? null : createEgress({ allow: parseAllowList(options.allow) });
  const ctx: Context = own ? { ...t.ctx, egress: { allow: parseAllowList(options.allow), request: (r) => own.request(r) } } : t.ctx;
  const runner = new Runner(t.ctx.clock, silentLog, options.pollMs ? { pollMs: options.pollMs } : {});
  runner.register(deliveryJobs(ctx, { leaseMs: t.config.leaseMs, ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}) }));
  return Object.assign(runner, { closeEgress: async () => { await own?.close(); } });
}

/** The webhook-signature entries of a request, checked with the official library's signer. */
export function signedWith(secret: string | Uint8Array, r: Received): boolean {
  const wh = typeof secret === 'string' ? new Webhook(secret) : new Webhook(secret, { format: 'raw' });
  const id = String(r.headers['webhook-id']);
  const expected = wh.sign(id, new Date(Number(r.headers['webhook-timestamp']) * 1000), r.body);
  return String(r.headers['webhook-signature']).split(' ').includes(expected);
}

export const silentLog = { info: () => {}, warn: () => {}, error: () => {} };
