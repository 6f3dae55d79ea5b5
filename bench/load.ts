import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  /** Responses that were not 2xx, plus socket errors and timeouts. */
  errors: number;
  p50Ms: number;
  p99Ms: number;
  /**
   * CPU time this process spent per request, in microseconds (the server under test runs in the
   * bench's own process; wrk in its own). It holds steady when other work shares the machine,
   * which throughput does not: compare it beside the req/s ratio on a busy host.
   */
  cpuMicros: number;
}

export interface LoadOptions {
  headers?: Record<string, string>;
  seconds: number;
  connections?: number;
  /** One worker thread of wrk: the server under test keeps the other core of two. */
  threads?: number;
  method?: string;
  body?: string;
}

// wrk reports through a Lua `done` hook: the figures come out as one JSON line on stdout.
const REPORT = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"requests":%d,"micros":%d,"errors":%d,"p50":%d,"p99":%d}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;

/**
 * Drives `url` with wrk (Debian's `wrk`): a C load generator in its own process, so the figure
 * measures the server, not the client (a Node.js loop caps a bare Fastify route at about a third
 * of what it serves). Non-2xx answers count as errors.
 */
export async function load(url: string, options: LoadOptions): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'parley-wrk-'));
  try {
    const script = join(dir, 'report.lua');
    const setup = options.method || options.body !== undefined
      ? `wrk.method = ${JSON.stringify(options.method ?? 'POST')}\nwrk.body = ${luaString(options.body ?? '')}\n`
      : '';
    writeFileSync(script, setup + REPORT);
    const headers = Object.entries(options.headers ?? {}).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
    const args = ['-t', String(options.threads ?? 1), '-c', String(options.connections ?? 50), '-d', `${options.seconds}s`, '--latency', '-s', script, ...headers, url];
    const cpuBefore = process.cpuUsage();
    const out = await run('wrk', args);
    const cpu = process.cpuUsage(cpuBefore);
    const line = out.split('\n').reverse().find((l) => l.startsWith('{'));
    if (!line) throw new Error(`wrk printed no report:\n${out}`);
    const m = JSON.parse(line) as { requests: number; micros: number; errors: number; p50: number; p99: number };
    const seconds = m.micros / 1e6;
    return { requests: m.requests, seconds, rps: m.requests / seconds, errors: m.errors, p50Ms: m.p50 / 1000, p99Ms: m.p99 / 1000,
      cpuMicros: (cpu.user + cpu.system) / Math.max(1, m.requests) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A Lua long string holding `text` verbatim, whatever brackets it contains. */
function luaString(text: string): string {
  let level = '';
  while (text.includes(`]${level}]`)) level += '=';
  return `[${level}[${text}]${level}]`;
}

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'ENOENT' ? new Error('wrk is not installed: apt-get install wrk (benchmarks need it; the test suite does not)') : error));
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`wrk exited with ${code}: ${err}`))));
  });
}

/** Sequential latency: p50 and p99 in milliseconds over `count` requests. */
export async function latency(url: string, headers: Record<string, string>, count: number): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = process.hrtime.bigint();
    const res = await fetch(url, { headers });
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99) };
}

/** The middle value (the upper one of an even count): the figure a round-based bench reports. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}
