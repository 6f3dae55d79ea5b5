/**
 * A CPU profile of the service while wrk drives one hot path, summed by function and by file
 * (self time), so a change can be aimed at what the profile shows rather than at a guess.
 * The profile covers only the measured wrk run (after a warm-up), through Node's inspector in
 * the server's own process.
 * Run: PARLEY_TEST_DIALECTS=sqlite node --import tsx bench/profile.ts get|create|bare [seconds]  (writes the .cpuprofile to $TMPDIR;
 *   PARLEY_PROFILE=0 prints only the CPU per request of three unprofiled runs)
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { buildTestApp, createApiToken, createTenant } from '../test/helpers/app.ts';
import { toolWebhook } from '../test/helpers/fixtures.ts';
import Fastify from 'fastify';
import { load } from './load.ts';

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
interface Profile { nodes: Node[]; samples: number[]; timeDeltas: number[] }

const what = process.argv[2] === 'create' ? 'create' : process.argv[2] === 'bare' ? 'bare' : 'get';
const seconds = Number(process.argv[3] ?? 8);

const t = await buildTestApp('sqlite', { PARLEY_RATE_LIMIT_PER_MINUTE: '0' }, { logLevel: 'silent' });
const tenant = await createTenant(t, 'Profiled');
const token = await createApiToken(t, tenant.vendorId, { role: 'editor', organizationId: tenant.organizationId });
const extensions = ['a', 'b', 'c', 'd', 'e'].map((n) => toolWebhook(`tool_${n}`));
const body = JSON.stringify({ name: 'Bench', systemPrompt: 'You are a bench.', systemPromptGreeting: 'Hello.', extensions });
const created = await t.call('POST', `${tenant.orgPath}/assistants`, { body: JSON.parse(body) });
const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
// `bare`: the assistants bench's bare baseline (a Fastify route sending the same bytes), in the same process.
const sample = await (await fetch(address + String(created.headers.location), { headers })).text();
const bare = Fastify({ logger: false });
bare.get('/bare', async (_req, reply) => reply.type('application/json').send(sample));
const bareAddress = await bare.listen({ port: 0, host: '127.0.0.1' });
const run = (s: number) => what === 'get'
  ? load(address + String(created.headers.location), { headers, seconds: s, connections: 50 })
  : what === 'bare'
    ? load(`${bareAddress}/bare`, { headers, seconds: s, connections: 50 })
    : load(`${address}${tenant.orgPath}/assistants`, { method: 'POST', body, headers, seconds: s, connections: 10 });

await run(3); // warm-up: the JIT settles and caches fill
if (process.env.PARLEY_PROFILE === '0') {
  // Figures only, no profiler: three runs, the median CPU per request.
  const runs = [await run(seconds), await run(seconds), await run(seconds)].sort((a, b) => a.cpuMicros - b.cpuMicros);
  console.log(`${what}: CPU per request ${runs.map((r) => r.cpuMicros.toFixed(0)).join(' ')} us (median ${runs[1]?.cpuMicros.toFixed(0)}), `
    + `${runs[1]?.rps.toFixed(0)} req/s, p99 ${runs[1]?.p99Ms.toFixed(2)} ms, errors ${runs.reduce((n, r) => n + r.errors, 0)}`);
  await t.close();
  await bare.close();
  process.exit(0);
}
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 100 });
await session.post('Profiler.start');
const result = await run(seconds);
const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: Profile };
session.disconnect();
const file = join(tmpdir(), `parley-${what}-${Date.now()}.cpuprofile`);
writeFileSync(file, JSON.stringify(profile));

// Self time per node, then summed by function (name + file:line) and by file.
const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);
const byFunction = new Map<string, number>();
const byFile = new Map<string, number>();
const where = (url: string) => {
  if (!url) return '(native)';
  const path = url.replace(/^file:\/\//, '');
  const nm = path.lastIndexOf('node_modules/');
  return nm >= 0 ? path.slice(nm + 13) : path.startsWith('node:') ? path : relative(process.cwd(), path);
};
for (const node of profile.nodes) {
  const us = self.get(node.id) ?? 0;
  if (!us) continue;
  const file = where(node.callFrame.url);
  const fn = `${node.callFrame.functionName || '(anonymous)'} ${file}:${node.callFrame.lineNumber + 1}`;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
  const pkg = file.includes('/') && !file.startsWith('src/') && !file.startsWith('bench/') && !file.startsWith('test/')
    ? file.split('/').slice(0, file.startsWith('@') ? 2 : 1).join('/') : file;
  byFile.set(pkg, (byFile.get(pkg) ?? 0) + us);
}
const top = (map: Map<string, number>, n: number) => [...map].sort((a, b) => b[1] - a[1]).slice(0, n)
  .map(([k, v]) => `  ${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`).join('\n');
console.log(`${what}: ${result.rps.toFixed(0)} req/s, p99 ${result.p99Ms.toFixed(2)} ms, CPU ${result.cpuMicros.toFixed(0)} us/request (profiler on), ${result.errors} errors`);
console.log(`profile: ${file}\nby file or package (self time):\n${top(byFile, 25)}\nby function (self time):\n${top(byFunction, 40)}`);
await t.close();
await bare.close();
