/**
 * The service as users run it: `parley serve` built (dist/), NODE_ENV=production, its default
 * hooks (rate limiter, flood guard, metrics, request logger at warn), in its own process, against
 * a bare Fastify process answering the same bytes, both driven by the same wrk harness in
 * alternating rounds. GET one assistant (5 extensions): target >= 0.5 x bare, p99 < 10 ms at 50
 * connections, on a quiet machine. CPU per request is read from each process's /proc stat, so it
 * holds on a busy host where throughput does not.
 * The rate limiter runs at a limit the load never reaches (the default, 6,000 a minute per
 * token, would refuse most of the bench): it is measured, not bypassed.
 * Run: npm run bench -- bench/service.bench.ts  (PARLEY_BENCH_PROFILE=1 also writes a CPU
 * profile of the service's last round to $TMPDIR)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { toolWebhook } from '../test/helpers/fixtures.ts';
import { freePort } from '../test/helpers/service-process.ts';
import { load, median, type LoadResult } from './load.ts';

const SECONDS = Number(process.env.PARLEY_BENCH_SECONDS ?? 3);
const ROUNDS = 5;
const CONNECTIONS = 50;
const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** The bare baseline: Fastify answering the given bytes, in plain Node (no loader), as the service runs. */
const BARE = `
import Fastify from 'fastify';
const body = process.env.BARE_BODY;
const app = Fastify({ logger: false });
app.get('/bare', async (_req, reply) => reply.type('application/json').send(body));
await app.listen({ port: Number(process.env.BARE_PORT), host: '127.0.0.1' });
process.stdout.write('listening\\n');
`;

/** CPU time (user + system) a process has used, in microseconds. */
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_SECOND;
}

async function waitFor(url: string, child: ChildProcess, log: () => string): Promise<void> {
  for (const until = Date.now() + 30_000; Date.now() < until; await sleep(100)) {
    if (child.exitCode !== null) throw new Error(`the process exited (${child.exitCode}):\n${log()}`);
    if (await fetch(url).then((r) => r.status < 500, () => false)) return;
  }
  throw new Error(`${url} did not answer in 30 s:\n${log()}`);
}

function start(args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; log: () => string } {
  const child = spawn(process.execPath, args, { cwd: process.cwd(), env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-4000)));
  child.stderr.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-4000)));
  return { child, log: () => out };
}

async function api(base: string, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any; location: string | null }> {
  const res = await fetch(base + path, { method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return { status: res.status, json: text ? JSON.parse(text) : null, location: res.headers.get('location') };
}

/** One wrk round with the CPU the server process used per request. */
async function measure(url: string, pid: number, headers?: Record<string, string>): Promise<LoadResult> {
  const before = cpuMicros(pid);
  const result = await load(url, { headers, seconds: SECONDS, connections: CONNECTIONS });
  return { ...result, cpuMicros: (cpuMicros(pid) - before) / Math.max(1, result.requests) };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'parley-service-bench-'));
  const adminToken = randomBytes(32).toString('base64url');
  const [port, barePort] = [await freePort(), await freePort()];
  const profile = process.env.PARLEY_BENCH_PROFILE === '1';
  const service = start([...(profile ? ['--cpu-prof', `--cpu-prof-dir=${tmpdir()}`] : []), 'bin/parley.js', 'serve'], {
    PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', LOG_LEVEL: 'warn', PORT: String(port),
    DATABASE_URL: `sqlite:${join(dir, 'parley.db')}`, PARLEY_ADMIN_TOKEN: adminToken, PARLEY_RATE_LIMIT_PER_MINUTE: '100000000',
    PARLEY_SIP_PORT: '0', PARLEY_RTP_PORTS: '46000-46099',
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitFor(`${base}/healthz`, service.child, service.log);
    const vendor = await api(base, adminToken, 'POST', '/api/v1/vendors', { name: 'Bench' });
    const vendorId = vendor.json.data.id as string;
    const org = await api(base, adminToken, 'POST', `/api/v1/vendors/${vendorId}/organizations`, { name: 'Bench' });
    const orgPath = `/api/v1/vendors/${vendorId}/organizations/${org.json.data.id}`;
    const minted = await api(base, adminToken, 'POST', `/api/v1/vendors/${vendorId}/api-tokens`, { name: 'bench', role: 'editor', organizationId: org.json.data.id });
    const token = minted.json.data.token as string;
    const extensions = ['a', 'b', 'c', 'd', 'e'].map((n) => toolWebhook(`tool_${n}`));
    const created = await api(base, token, 'POST', `${orgPath}/assistants`, { name: 'Bench', systemPrompt: 'You are a bench.', systemPromptGreeting: 'Hello.', extensions });
    const itemUrl = base + created.location!;
    const auth = { authorization: `Bearer ${token}` };
    const sample = await (await fetch(itemUrl, { headers: auth })).text();

    const bare = start(['--input-type=module', '-e', BARE], { PATH: process.env.PATH, NODE_ENV: 'production', BARE_PORT: String(barePort), BARE_BODY: sample });
    const bareUrl = `http://127.0.0.1:${barePort}/bare`;
    try {
      await waitFor(bareUrl, bare.child, bare.log);
      await measure(bareUrl, bare.child.pid!); // warm up both
      await measure(itemUrl, service.child.pid!, auth);
      const rounds: { bare: LoadResult; ours: LoadResult }[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        rounds.push({ bare: await measure(bareUrl, bare.child.pid!), ours: await measure(itemUrl, service.child.pid!, auth) });
      }
      const ratios = rounds.map((r) => r.ours.rps / r.bare.rps);
      const of = (side: 'bare' | 'ours', key: 'rps' | 'p99Ms' | 'cpuMicros') => median(rounds.map((r) => r[side][key]));
      const errors = rounds.reduce((n, r) => n + r.ours.errors + r.bare.errors, 0);
      const ratio = median(ratios);
      console.log(`service benchmark: parley serve (dist/, NODE_ENV=production, LOG_LEVEL=warn, SQLite) against a bare Fastify process, GET body ${sample.length} bytes, wrk ${ROUNDS} alternating rounds of ${SECONDS}s @${CONNECTIONS} connections`);
      console.log(`  bare process         ${of('bare', 'rps').toFixed(0)} req/s  p99 ${of('bare', 'p99Ms').toFixed(2)} ms  CPU ${of('bare', 'cpuMicros').toFixed(0)} us/request`);
      console.log(`  GET one assistant    ${of('ours', 'rps').toFixed(0)} req/s  p99 ${of('ours', 'p99Ms').toFixed(2)} ms  CPU ${of('ours', 'cpuMicros').toFixed(0)} us/request`);
      console.log(`  ratio ${ratio.toFixed(2)} (rounds ${ratios.map((r) => r.toFixed(2)).join(' ')}; target >= 0.50, p99 < 10 ms); non-2xx or socket errors: ${errors}`);
      console.log(ratio >= 0.5 && of('ours', 'p99Ms') < 10 && errors === 0 ? '  all targets met' : '  TARGET MISSED (on a busy machine the bare side\'s p99 shows how much of it is the machine)');
    } finally {
      bare.child.kill();
    }
  } finally {
    service.child.kill('SIGTERM');
    await new Promise((resolve) => (service.child.exitCode !== null ? resolve(null) : service.child.once('exit', resolve)));
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
