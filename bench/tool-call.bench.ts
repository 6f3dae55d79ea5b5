/**
 * The latency Parley adds to one tool call during a call, in two legs:
 *   1. the LLM server writes the stream with the tool call → the webhook request has arrived;
 *   2. the webhook writes its response → the next LLM request has arrived;
 * against a direct undici POST (keep-alive, same body) from Parley's process to the same
 * receiver in the same run, interleaved with the calls. The LLM server, receiver and call client run in a child process
 * (bench/tool-call.peer.ts) that times both legs on its own clock, so this process runs only
 * Parley, as in production. Each leg crosses loopback twice, like one direct round trip, so
 * what Parley adds is both legs minus two direct round trips.
 *   target: added p50 < 2 ms.
 * Run: npm run bench -- bench/tool-call.bench.ts  (PARLEY_BENCH_DIALECT=postgres with PARLEY_TEST_PG_URL for PostgreSQL)
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { Pool } from 'undici';
import type { Dialect } from '../src/db/database.ts';
import { ADMIN_TOKEN, buildTestApp, createTenant } from '../test/helpers/app.ts';
import { toolSchema } from '../test/helpers/fixtures.ts';
import type { PeerCommand } from './tool-call.peer.ts';

const dialect = (process.env.PARLEY_BENCH_DIALECT ?? 'sqlite') as Dialect;
const CALLS = Number(process.env.PARLEY_BENCH_CALLS ?? 30);
const TURNS = 10;
const WARMUP_CALLS = 3;


function stats(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.floor(q * (sorted.length - 1))] ?? NaN;
  return { n: sorted.length, p50: at(0.5), p99: at(0.99) };
}

const ms = (v: number) => `${v.toFixed(3)} ms`;
function line(label: string, values: number[]) {
  const s = stats(values);
  console.log(`  ${label.padEnd(58)} p50 ${ms(s.p50).padStart(10)}   p99 ${ms(s.p99).padStart(10)}   (n=${s.n})`);
  return s;
}

async function main() {
  const peer = fork(new URL('./tool-call.peer.ts', import.meta.url), { execArgv: ['--import', 'tsx'] });
  const [ready] = (await once(peer, 'message')) as [{ llmBaseUrl: string; receiverUrl: string }];
  const t = await buildTestApp(dialect, { PARLEY_EGRESS_ALLOW: '127.0.0.0/8', OPENAI_BASE_URL: ready.llmBaseUrl, OPENAI_API_KEY: 'bench' });
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const tenant = await createTenant(t);
  const created = await t.call('POST', `${tenant.orgPath}/assistants`, {
    body: {
      name: 'Bench', systemPrompt: 'You look up orders.',
      extensions: [{ type: 'tool_webhook', parameters: { name: 'lookup_order', serverUrl: ready.receiverUrl, schema: toolSchema('lookup_order'), headers: { Authorization: 'Bearer bench' } } }],
    },
  });
  const assistantId = created.json().data.id as string;
  const websocketUrls: string[] = [];
  for (let i = 0; i < WARMUP_CALLS + CALLS; i++) {
    const res = await fetch(`${address}${tenant.orgPath}/assistants/${assistantId}/calls`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: '{}',
    });
    websocketUrls.push(((await res.json()) as { data: { websocketUrl: string } }).data.websocketUrl);
  }
  // The baseline from this process: the same receiver, a keep-alive undici pool, the same body,
  // TURNS posts back to back after each call, so that both see the same machine load.
  const pool = new Pool(new URL(ready.receiverUrl).origin, { connections: 4 });
  const body = JSON.stringify({ type: 'tool_webhook', name: 'lookup_order', callId: crypto.randomUUID(), transport: { type: 'websocket' }, parameters: { orderNumber: 'A-17', express: true } });
  const direct: number[] = [];
  for (const [index, websocketUrl] of websocketUrls.entries()) {
    const measure = index >= WARMUP_CALLS;
    const command: PeerCommand = { type: 'call', websocketUrl, turns: TURNS, measure };
    peer.send(command);
    await once(peer, 'message');
    for (let i = 0; i < TURNS; i++) {
      const sent = performance.now();
      const res = await pool.request({ path: '/tools', method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer bench' }, body });
      await res.body.text();
      if (measure) direct.push(performance.now() - sent);
    }
  }
  await pool.close();
  peer.send({ type: 'report' } satisfies PeerCommand);
  const [legs] = (await once(peer, 'message')) as [{ toWebhook: number[]; backToLlm: number[] }];

  console.log(`\nOne tool call through Parley (${dialect}, ${CALLS} calls x ${TURNS} turns, one tool call per turn)`);
  const out = line('1. LLM writes the tool call -> webhook request arrives', legs.toWebhook);
  const back = line('2. webhook response written -> next LLM request arrives', legs.backToLlm);
  const both = line('both legs', legs.toWebhook.map((v, i) => v + (legs.backToLlm[i] ?? NaN)));
  console.log('Direct undici POST from Parley\'s process to the same receiver (keep-alive, same body)');
  const round = line('request sent -> response read', direct);
  // Each leg crosses loopback twice (into Parley, out of it), as a direct round trip does, so
  // a round trip per leg is what the network and the peers cost; the rest is Parley's work.
  const added = both.p50 - 2 * round.p50;
  console.log(`\n  legs p50 ${ms(out.p50)} + ${ms(back.p50)} = ${ms(both.p50)}; minus two direct round trips (${ms(2 * round.p50)}):`);
  console.log(`  added by Parley per tool call, p50: ${ms(added)} (target < 2 ms) ${added < 2 ? 'OK' : 'MISSED'}\n`);

  peer.send({ type: 'exit' } satisfies PeerCommand);
  await once(peer, 'exit');
  await t.close();
}

await main();
