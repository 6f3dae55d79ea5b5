/**
 * The API's hot paths against bare Fastify baselines of equal bytes, measured in the same run:
 *   GET one assistant (auth, tenant check, 5 extensions, the response schema applied): throughput
 *     >= 0.5 x a bare route returning the same body, p99 < 10 ms at 50 connections;
 *   a list page: p50 < 5 ms at 100,000 rows and <= 1.5 x its p50 at 1,000;
 *   create an assistant with 5 extensions against a bare route parsing the same body and inserting
 *     one row with better-sqlite3 (figures and ratio; no target in the issue).
 * Load comes from wrk (apt-get install wrk), in its own process.
 * Run: npm run bench -- bench/assistants.bench.ts  (PARLEY_BENCH_DIALECT=postgres with PARLEY_TEST_PG_URL for PostgreSQL)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import type { Dialect } from '../src/db/database.ts';
import { bumpCounter } from '../src/db/counters.ts';
import { buildTestApp, createApiToken, createTenant, type Tenant, type TestApp } from '../test/helpers/app.ts';
import { toolWebhook } from '../test/helpers/fixtures.ts';
import { latency, load, median, type LoadResult } from './load.ts';

const dialect = (process.env.PARLEY_BENCH_DIALECT ?? 'sqlite') as Dialect;
const SECONDS = Number(process.env.PARLEY_BENCH_SECONDS ?? 3);
const ROUNDS = 5;
const CONNECTIONS = 50;

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

/** Alternating short rounds of the bare route and ours, compared by their medians, so a noisy neighbour hits both sides. */
async function compare(bare: () => Promise<LoadResult>, ours: () => Promise<LoadResult>) {
  await bare(); // warm up both
  await ours();
  const rounds: { bare: LoadResult; ours: LoadResult }[] = [];
  for (let round = 0; round < ROUNDS; round++) rounds.push({ bare: await bare(), ours: await ours() });
  const ratios = rounds.map((r) => r.ours.rps / r.bare.rps);
  return {
    bareRps: median(rounds.map((r) => r.bare.rps)),
    oursRps: median(rounds.map((r) => r.ours.rps)),
    ratio: median(ratios),
    ratios,
    bareCpu: median(rounds.map((r) => r.bare.cpuMicros)),
    oursCpu: median(rounds.map((r) => r.ours.cpuMicros)),
    bareP99: median(rounds.map((r) => r.bare.p99Ms)),
    oursP99: median(rounds.map((r) => r.ours.p99Ms)),
    errors: rounds.reduce((n, r) => n + r.ours.errors + r.bare.errors, 0),
  };
}

async function main() {
  // The per-token rate limit would cap the load; it is measured on its own, not here.
  const t = await buildTestApp(dialect, { PARLEY_RATE_LIMIT_PER_MINUTE: '0' }, { logLevel: 'silent' });
  const small = await createTenant(t, 'Small');
  const big = await createTenant(t, 'Big');
  const writer = await createTenant(t, 'Writer');
  const token = await createApiToken(t, small.vendorId, { role: 'editor', organizationId: small.organizationId });
  const writerToken = await createApiToken(t, writer.vendorId, { role: 'editor', organizationId: writer.organizationId });
  const auth = { authorization: `Bearer ${token}` };
  const extensions = ['a', 'b', 'c', 'd', 'e'].map((n) => toolWebhook(`tool_${n}`));
  const createBody = JSON.stringify({ name: 'Bench', systemPrompt: 'You are a bench.', systemPromptGreeting: 'Hello.', extensions });
  const created = await t.call('POST', `${small.orgPath}/assistants`, { body: JSON.parse(createBody) });
  const itemPath = created.headers.location as string;
  await seed(t, small, 999);
  await seed(t, big, 100_000);
  const bigToken = await createApiToken(t, big.vendorId, { role: 'viewer', organizationId: big.organizationId });

  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const sample = await (await fetch(address + itemPath, { headers: auth })).text();
  const createdSample = JSON.stringify(created.json());

  // The bare baselines: the same bytes out; for writes, the same body parsed and one row inserted.
  const bare = Fastify({ logger: false });
  // A file with the pragmas Parley's own SQLite uses (src/db/database.ts), so both sides pay the same disk.
  const dir = mkdtempSync(join(tmpdir(), 'parley-bench-'));
  const sqlite = new Database(join(dir, 'bare.db'));
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.exec('CREATE TABLE assistants (id TEXT PRIMARY KEY, name TEXT, system_prompt TEXT, extensions TEXT, created_at TEXT)');
  const insert = sqlite.prepare('INSERT INTO assistants VALUES (?, ?, ?, ?, ?)');
  bare.get('/bare', async (_req, reply) => reply.type('application/json').send(sample));
  // The same bytes after spinning for `busyMicros` of CPU: a bare route as costly as ours, to tell
  // a tail of our own (a stall) from the tail any route of that cost gets at saturation.
  let busyMicros = 0;
  bare.get('/bare-busy', async (_req, reply) => {
    const until = performance.now() + busyMicros / 1000;
    while (performance.now() < until);
    return reply.type('application/json').send(sample);
  });
  bare.post('/bare', async (req, reply) => {
    const body = req.body as { name: string; systemPrompt: string; extensions: unknown[] };
    insert.run(crypto.randomUUID(), body.name, body.systemPrompt, JSON.stringify(body.extensions), new Date().toISOString());
    return reply.code(201).type('application/json').send(createdSample);
  });
  const bareAddress = await bare.listen({ port: 0, host: '127.0.0.1' });

  const get = await compare(
    () => load(bareAddress + '/bare', { seconds: SECONDS, connections: CONNECTIONS }),
    () => load(address + itemPath, { headers: auth, seconds: SECONDS, connections: CONNECTIONS }),
  );
  busyMicros = Math.max(0, get.oursCpu - get.bareCpu);
  const busy = [];
  for (let round = 0; round < 3; round++) busy.push(await load(bareAddress + '/bare-busy', { seconds: SECONDS, connections: CONNECTIONS }));
  const busyP99 = median(busy.map((r) => r.p99Ms));
  const json = { 'content-type': 'application/json' };
  const write = await compare(
    () => load(bareAddress + '/bare', { method: 'POST', body: createBody, headers: json, seconds: SECONDS, connections: 10 }),
    () => load(`${address}${writer.orgPath}/assistants`, { method: 'POST', body: createBody, headers: { ...json, authorization: `Bearer ${writerToken}` }, seconds: SECONDS, connections: 10 }),
  );

  const list = (tenant: Tenant, tk: string) => latency(`${address}${tenant.orgPath}/assistants?page=0&size=20`, { authorization: `Bearer ${tk}` }, 300);
  await list(small, token);
  const list1k = await list(small, token);
  const list100k = await list(big, bigToken);

  const ratios = (r: number[]) => r.map((x) => x.toFixed(2)).join(' ');
  console.log(`assistants benchmark (${dialect}), GET body ${sample.length} bytes, wrk ${ROUNDS} alternating rounds of ${SECONDS}s`);
  console.log(`  bare GET route       ${get.bareRps.toFixed(0)} req/s  p99 ${get.bareP99.toFixed(2)} ms @${CONNECTIONS} connections`);
  console.log(`  GET assistant        ${get.oursRps.toFixed(0)} req/s  p99 ${get.oursP99.toFixed(2)} ms  ratio ${get.ratio.toFixed(2)} (rounds ${ratios(get.ratios)}; target >= 0.50, p99 < 10 ms)`);
  console.log(`  bare GET + ${busyMicros.toFixed(0)} us busy ${median(busy.map((r) => r.rps)).toFixed(0)} req/s  p99 ${busyP99.toFixed(2)} ms (the bare route made as costly as ours: the tail any handler of that cost gets at saturation)`);
  console.log(`  bare POST + insert   ${write.bareRps.toFixed(0)} req/s  p99 ${write.bareP99.toFixed(2)} ms @10 connections (better-sqlite3, WAL file)`);
  console.log(`  create assistant     ${write.oursRps.toFixed(0)} req/s  p99 ${write.oursP99.toFixed(2)} ms  ratio ${write.ratio.toFixed(2)} (rounds ${ratios(write.ratios)})`);
  console.log(`  list p50 @1,000      ${list1k.p50.toFixed(2)} ms (p99 ${list1k.p99.toFixed(2)})`);
  console.log(`  list p50 @100,000    ${list100k.p50.toFixed(2)} ms (p99 ${list100k.p99.toFixed(2)})  ratio ${(list100k.p50 / list1k.p50).toFixed(2)} (target <= 1.5, p50 < 5 ms)`);
  console.log(`  server CPU per request: GET bare ${get.bareCpu.toFixed(0)} us, ours ${get.oursCpu.toFixed(0)} us (ratio ${(get.bareCpu / get.oursCpu).toFixed(2)}); `
    + `create bare ${write.bareCpu.toFixed(0)} us, ours ${write.oursCpu.toFixed(0)} us (ratio ${(write.bareCpu / write.oursCpu).toFixed(2)})`);
  console.log(`  non-2xx or socket errors: ${get.errors + write.errors}`);
  const ok = get.ratio >= 0.5 && get.oursP99 < 10 && list100k.p50 < 5 && list100k.p50 / list1k.p50 <= 1.5 && get.errors + write.errors === 0;
  console.log(ok ? '  all targets met' : '  TARGET MISSED');
  await bare.close();
  sqlite.close();
  rmSync(dir, { recursive: true, force: true });
  await t.close();
}

await main();
