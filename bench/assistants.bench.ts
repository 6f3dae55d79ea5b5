/**
 * GET one assistant (auth + 5 extensions) and a list page, against a bare Fastify route that
 * returns a constant body of the same size, measured in the same run on the same machine.
 *   targets: GET throughput >= 0.5 x bare; list p50 < 5 ms at 100,000 rows and <= 1.5 x its p50 at 1,000.
 * Run: npm run bench -- bench/assistants.bench.ts  (PARLEY_BENCH_DIALECT=postgres with PARLEY_TEST_PG_URL for PostgreSQL)
 */
import Fastify from 'fastify';
import type { Dialect } from '../src/db/database.ts';
import { bumpCounter } from '../src/db/counters.ts';
import { buildTestApp, createApiToken, createTenant, type Tenant, type TestApp } from '../test/helpers/app.ts';
import { toolWebhook } from '../test/helpers/fixtures.ts';
import { latency, load } from './load.ts';

const dialect = (process.env.PARLEY_BENCH_DIALECT ?? 'sqlite') as Dialect;
const SECONDS = Number(process.env.PARLEY_BENCH_SECONDS ?? 2);
const ROUNDS = 9;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

async function seed(t: TestApp, tenant: Tenant, count: number) {
  const ext = JSON.stringify([{ id: crypto.randomUUID(), name: 'lookup', type: 'custom', parameters: { a: 1 } }]);
  const at = new Date().toISOString();
  for (let done = 0; done < count; ) {
    const batch = Math.min(1000, count - done);
    const rows = Array.from({ length: batch }, (_, i) => ({
      id: crypto.randomUUID(), organization_id: tenant.organizationId, kind: 'assistant', name: `bulk ${String(done + i).padStart(7, '0')}`,
      system_prompt: 'You are helpful.', system_prompt_greeting: 'Hi', strategy_id: null, telephone_number_id: null,
      extensions: ext, call_event_hooks: '[]', version: 1, created_at: at, updated_at: at,
    }));
    await t.db.kysely.transaction().execute(async (trx) => {
      await trx.insertInto('assistants').values(rows).execute();
      await bumpCounter(trx, `assistants:assistant:${tenant.organizationId}`, batch);
    });
    done += batch;
  }
}

async function main() {
  // The per-token rate limit would cap the load; it is measured on its own, not here.
  const t = await buildTestApp(dialect, { PARLEY_RATE_LIMIT_PER_MINUTE: '0' });
  const small = await createTenant(t, 'Small');
  const big = await createTenant(t, 'Big');
  const token = await createApiToken(t, small.vendorId, { role: 'editor', organizationId: small.organizationId });
  const auth = { authorization: `Bearer ${token}` };
  const extensions = ['a', 'b', 'c', 'd', 'e'].map((n) => toolWebhook(`tool_${n}`));
  const created = await t.call('POST', `${small.orgPath}/assistants`, { body: { name: 'Bench', systemPrompt: 'You are a bench.', extensions } });
  const itemPath = created.headers.location as string;
  await seed(t, small, 999);
  await seed(t, big, 100_000);
  const bigToken = await createApiToken(t, big.vendorId, { role: 'viewer', organizationId: big.organizationId });

  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const sample = await (await fetch(address + itemPath, { headers: auth })).text();
  const bare = Fastify({ logger: false });
  bare.get('/bare', async (_req, reply) => reply.type('application/json').send(sample));
  const bareAddress = await bare.listen({ port: 0, host: '127.0.0.1' });

  await load(bareAddress + '/bare', {}, 1); // warm up both
  await load(address + itemPath, auth, 1);
  // Short alternating rounds, compared by their median, so that a noisy neighbour hits both sides.
  const bareRps: number[] = [];
  const getRps: number[] = [];
  let errors = 0;
  for (let round = 0; round < ROUNDS; round++) {
    bareRps.push((await load(bareAddress + '/bare', {}, SECONDS)).rps);
    const run = await load(address + itemPath, auth, SECONDS);
    getRps.push(run.rps);
    errors += run.errors;
  }
  const ratios = getRps.map((g, i) => g / (bareRps[i] ?? 1));
  const bareRun = { rps: median(bareRps) };
  const getRun = { rps: median(getRps), errors };

  const list = (tenant: Tenant, tk: string) => latency(`${address}${tenant.orgPath}/assistants?page=0&size=20`, { authorization: `Bearer ${tk}` }, 300);
  await list(small, token);
  const list1k = await list(small, token);
  const list100k = await list(big, bigToken);

  const ratio = median(ratios);
  console.log(`assistants benchmark (${dialect}), body ${sample.length} bytes, ${ROUNDS} alternating rounds of ${SECONDS}s`);
  console.log(`  bare route           ${bareRun.rps.toFixed(0)} req/s`);
  console.log(`  GET assistant        ${getRun.rps.toFixed(0)} req/s  ratio ${ratio.toFixed(2)} (median of ${ratios.map((r) => r.toFixed(2)).join(' ')}; target >= 0.50) errors ${getRun.errors}`);
  console.log(`  list p50 @1,000      ${list1k.p50.toFixed(2)} ms (p99 ${list1k.p99.toFixed(2)})`);
  console.log(`  list p50 @100,000    ${list100k.p50.toFixed(2)} ms (p99 ${list100k.p99.toFixed(2)})  ratio ${(list100k.p50 / list1k.p50).toFixed(2)} (target <= 1.5, p50 < 5 ms)`);
  const ok = ratio >= 0.5 && list100k.p50 < 5 && list100k.p50 / list1k.p50 <= 1.5;
  console.log(ok ? '  all targets met' : '  TARGET MISSED');
  await bare.close();
  await t.close();
}

await main();
