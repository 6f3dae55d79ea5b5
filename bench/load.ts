import { spawn } from 'node:child_process';

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  errors: number;
}

/**
 * Drives `url` with `connections` keep-alive connections for `seconds`, from a child process so
 * the load generator has its own core (of two) and the server's process measures only itself.
 */
export function load(url: string, headers: Record<string, string>, seconds: number, connections = 16): Promise<LoadResult> {
  const source = `
    const http = require('node:http');
    const { url, headers, seconds, connections } = JSON.parse(process.argv[1]);
    const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
    const target = new URL(url);
    let requests = 0, errors = 0;
    const deadline = Date.now() + seconds * 1000;
    function one() {
      return new Promise((resolve) => {
        const req = http.request({ agent, host: target.hostname, port: target.port, path: target.pathname + target.search, headers }, (res) => {
          res.on('data', () => {});
          res.on('end', () => { if (res.statusCode === 200) requests++; else errors++; resolve(); });
        });
        req.on('error', () => { errors++; resolve(); });
        req.end();
      });
    }
    async function loop() { while (Date.now() < deadline) await one(); }
    const start = Date.now();
    Promise.all(Array.from({ length: connections }, loop)).then(() => {
      agent.destroy();
      process.stdout.write(JSON.stringify({ requests, errors, seconds: (Date.now() - start) / 1000 }));
    });
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', source, JSON.stringify({ url, headers, seconds, connections })]);
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`load generator exited with ${code}`));
      const m = JSON.parse(out) as { requests: number; errors: number; seconds: number };
      resolve({ ...m, rps: m.requests / m.seconds });
    });
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
