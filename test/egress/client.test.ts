import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { RequestListener, Server } from 'node:http';
import { subscribe } from 'node:diagnostics_channel';
import { inspect } from 'node:util';
import { EgressError, createEgress } from '../../src/egress/client.ts';
import type { EgressLookup, EgressRequest } from '../../src/egress/client.ts';
import { parseAllowList } from '../../src/egress/policy.ts';

// Every client socket Node creates, so tests can prove a refusal happened before connect.
let socketsCreated = 0;
subscribe('net.client.socket', () => socketsCreated++);

interface TestServer { server: Server; port: number; connections: number; paths: string[]; hostHeaders: string[] }
const servers: TestServer[] = [];
async function serve(host: string, handler: RequestListener, port = 0): Promise<TestServer> {
  const t: TestServer = { server: createServer(handler), port: 0, connections: 0, paths: [], hostHeaders: [] };
  t.server.on('connection', () => t.connections++);
  t.server.on('request', (req) => { t.paths.push(req.url ?? ''); t.hostHeaders.push(req.headers.host ?? ''); });
  await new Promise<void>((resolve, reject) => t.server.once('error', reject).listen(port, host, resolve));
  t.port = (t.server.address() as { port: number }).port;
  servers.push(t);
  return t;
}
async function closedPort(): Promise<TestServer> { // a port with nothing listening on it
  const t = await serve('127.0.0.1', hello);
  return new Promise((resolve) => t.server.close(() => resolve(t)));
}
const egresses: { close(): Promise<void> }[] = [];
function egress(allow: string, lookup?: EgressLookup) {
  const e = createEgress({ allow: parseAllowList(allow), ...(lookup ? { lookup } : {}) });
  egresses.push(e);
  return e;
}
after(async () => {
  await Promise.all(egresses.map((e) => e.close()));
  for (const t of servers) { t.server.closeAllConnections(); t.server.close(); }
});
const base = { timeoutMs: 2000, maxResponseBytes: 1 << 20 } satisfies Partial<EgressRequest>;
async function failure(promise: Promise<unknown>): Promise<EgressError> {
  try { await promise; } catch (err) { assert.ok(err instanceof EgressError, String(err)); return err; }
  assert.fail('expected an EgressError');
}

const hello: RequestListener = (req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString())).on('end', () => res.end(`hi ${req.method} ${body}`));
};

void test('allowed loopback (IPv4 and IPv6) returns status, headers and body', async () => {
  const v4 = await serve('127.0.0.1', hello);
  const v6 = await serve('::1', hello);
  const r4 = await egress('127.0.0.0/8').request({ ...base, url: `http://127.0.0.1:${v4.port}/x`, body: 'ping' });
  assert.equal(r4.status, 200);
  assert.equal(r4.body, 'hi POST ping');
  assert.ok(typeof r4.headers['content-length'] === 'string' && r4.latencyMs >= 0);
  const r6 = await egress('::1/128').request({ ...base, url: `http://[::1]:${v6.port}/y`, method: 'PUT', body: 'z' });
  assert.equal(r6.body, 'hi PUT z');
});

void test('refused targets never reach the server (no socket is even created)', async () => {
  const t = await serve('127.0.0.1', hello);
  const e = egress('::1', () => Promise.resolve([{ address: '::1', family: 6 }, { address: '127.0.0.1', family: 4 }]));
  const before = socketsCreated;
  for (const url of [`http://127.0.0.1:${t.port}/`, `http://0x7f.1:${t.port}/`, `http://[::ffff:127.0.0.1]:${t.port}/`, `http://mixed.test:${t.port}/`]) {
    const err = await failure(e.request({ ...base, url }));
    assert.equal(err.kind, 'refused_address', url);
    assert.match(err.detail ?? '', /loopback/);
    // The message may reach a tenant: it never names the address a name resolved to.
    if (url.includes('mixed.test')) assert.doesNotMatch(err.message, /127\.0\.0\.1|::1|loopback/);
  }
  // mixed.test: its allowed ::1 answer is not dialled either, because 127.0.0.1 is refused.
  assert.equal(socketsCreated, before);
  assert.equal(t.connections, 0);
});

void test('non-http URLs are invalid_url', async () => {
  const e = egress('127.0.0.0/8');
  for (const url of ['ftp://127.0.0.1/', 'file:///etc/passwd', 'not a url', 'http://user:pw@127.0.0.1/']) {
    assert.equal((await failure(e.request({ ...base, url }))).kind, 'invalid_url', url);
  }
});

void test('redirects are returned as responses, never followed', async () => {
  const t = await serve('127.0.0.1', (req, res) => {
    if (req.url === '/start') res.writeHead(302, { location: '/target' }).end('moved');
    else res.end('followed');
  });
  const r = await egress('127.0.0.0/8').request({ ...base, url: `http://127.0.0.1:${t.port}/start` });
  assert.equal(r.status, 302);
  assert.equal(r.headers['location'], '/target');
  assert.equal(r.body, 'moved');
  assert.deepEqual(t.paths, ['/start']);
});

void test('total timeout covers slow headers and slow bodies', async () => {
  const t = await serve('127.0.0.1', (req, res) => {
    if (req.url === '/trickle') {
      res.writeHead(200);
      const iv = setInterval(() => res.write('.'), 50);
      res.on('close', () => clearInterval(iv));
    } // '/hang' never answers
  });
  const e = egress('127.0.0.0/8');
  for (const path of ['/hang', '/trickle']) {
    const started = Date.now();
    const err = await failure(e.request({ ...base, url: `http://127.0.0.1:${t.port}${path}`, timeoutMs: 300 }));
    const elapsed = Date.now() - started;
    assert.equal(err.kind, 'timeout', path);
    assert.ok(elapsed >= 250 && elapsed < 1500, `${path} took ${elapsed}ms`);
  }
});

void test('caller abort and refused connections are reported as such', async () => {
  const t = await serve('127.0.0.1', () => undefined);
  const e = egress('127.0.0.0/8');
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 50);
  const aborted = await failure(e.request({ ...base, url: `http://127.0.0.1:${t.port}/`, signal: ac.signal }));
  assert.equal(aborted.kind, 'aborted');
  const closed = await closedPort();
  assert.equal((await failure(e.request({ ...base, url: `http://127.0.0.1:${closed.port}/` }))).kind, 'connect');
});

void test('oversized bodies fail with too_large and the connection is dropped', async () => {
  const CHUNK = Buffer.alloc(64 * 1024, 'a');
  let written = 0;
  let serverSawClose!: () => void;
  const closedPromise = new Promise<void>((resolve) => (serverSawClose = resolve));
  const t = await serve('127.0.0.1', (req, res) => {
    if (req.url === '/declared') return void res.writeHead(200, { 'content-length': String(50e6) }).write('x');
    res.on('close', serverSawClose);
    // Stream up to 256 MiB, honouring backpressure, until the client goes away.
    const pump = (): void => {
      while (!res.destroyed && written < 256 * 2 ** 20) { written += CHUNK.length; if (!res.write(CHUNK)) return void res.once('drain', pump); }
    };
    pump();
  });
  const e = egress('127.0.0.0/8');
  const err = await failure(e.request({ ...base, url: `http://127.0.0.1:${t.port}/stream`, maxResponseBytes: 100_000 }));
  assert.equal(err.kind, 'too_large');
  await closedPromise; // the server observed the connection being torn down
  assert.ok(written < 64 * 2 ** 20, `server pushed ${written} bytes before the client hung up`);
  const declared = await failure(e.request({ ...base, url: `http://127.0.0.1:${t.port}/declared`, maxResponseBytes: 1000 }));
  assert.equal(declared.kind, 'too_large');
});

void test('DNS answers are checked and the connection is pinned to the checked address', async () => {
  const v4 = await serve('127.0.0.1', (_req, res) => res.end('v4'));
  const v6 = await serve('::1', (_req, res) => res.end('v6'), v4.port); // same port, other loopback
  const answers = (...seq: string[]) => {
    const calls: string[] = [];
    const lookup: EgressLookup = (name) => {
      calls.push(name);
      const a = seq[calls.length - 1] ?? '0.0.0.0';
      return Promise.resolve([{ address: a, family: a.includes(':') ? 6 : 4 }]);
    };
    return { calls, lookup };
  };
  // /etc/hosts maps localhost to 127.0.0.1 only, so landing on [::1] proves we dialled our checked answer.
  const both = answers('127.0.0.1', '::1');
  const e = egress('127.0.0.0/8, ::1', both.lookup);
  const url = `http://localhost:${v4.port}/who`;
  assert.equal((await e.request({ ...base, url })).body, 'v4');
  assert.equal((await e.request({ ...base, url })).body, 'v6');
  assert.deepEqual(both.calls, ['localhost', 'localhost']);
  assert.deepEqual([...v4.hostHeaders, ...v6.hostHeaders], [`localhost:${v4.port}`, `localhost:${v4.port}`]);
  // Rebinding to a forbidden address on the next lookup is refused; the pooled
  // connection to the previously checked address is not reused for it either.
  const rebind = answers('127.0.0.1', '::1');
  const strict = egress('127.0.0.0/8', rebind.lookup);
  assert.equal((await strict.request({ ...base, url })).body, 'v4');
  assert.equal((await failure(strict.request({ ...base, url }))).kind, 'refused_address');
  assert.equal(v6.connections, 1);
  assert.equal(v4.connections, 2);
});

void test('header values and URL secrets never appear in errors', async () => {
  const SECRET = 'S3CRET-TOKEN-4f9a';
  const slow = await serve('127.0.0.1', () => undefined);
  const big = await serve('127.0.0.1', (_req, res) => res.end('x'.repeat(5000)));
  const closed = await closedPort();
  const headers = { authorization: `Bearer ${SECRET}`, 'x-api-key': SECRET };
  const cases: [string, EgressRequest][] = [
    ['refused_address', { ...base, headers, url: `http://127.0.0.1:${slow.port}/?token=${SECRET}` }],
    ['timeout', { ...base, headers, url: `http://127.0.0.1:${slow.port}/?token=${SECRET}`, timeoutMs: 100 }],
    ['too_large', { ...base, headers, url: `http://127.0.0.1:${big.port}/${SECRET}`, maxResponseBytes: 10 }],
    ['connect', { ...base, headers, url: `http://127.0.0.1:${closed.port}/?token=${SECRET}` }],
    ['invalid_url', { ...base, headers: { 'x-bad': `${SECRET}\r\nx-injected: 1` }, url: `http://127.0.0.1:${slow.port}/` }],
    ['invalid_url', { ...base, headers, url: `http://${SECRET}:${SECRET}@127.0.0.1/` }],
  ];
  for (const [kind, req] of cases) {
    const allow = kind === 'refused_address' ? '' : '127.0.0.0/8';
    const err = await failure(egress(allow).request(req));
    assert.equal(err.kind, kind);
    for (const text of [err.message, err.stack ?? '', inspect(err, { depth: 5 }), JSON.stringify(err)]) {
      assert.ok(!text.includes(SECRET), `${kind} leaked a secret: ${text}`);
    }
  }
});
