import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createParley, ParleyError, type Timing } from '@parley/sdk';

/**
 * Retries on 429 and 503, against a fake Parley on loopback that answers what each test scripts
 * (the service's envelopes, its Retry-After). The waits go through an injected clock: nothing sleeps.
 */
interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

const V = '11111111-1111-4111-8111-111111111111';
const O = '22222222-2222-4222-8222-222222222222';
const refused = (status: number, code: string, retryAfter?: string): Answer => ({
  status,
  headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter },
  body: { success: false, message: code, data: null, timestamp: '2026-11-26T00:00:00.000Z', traceId: `trace-${status}`, error: { code, details: [] } },
});
const created: Answer = {
  status: 201,
  body: { success: true, message: 'Created', data: { id: '33333333-3333-4333-8333-333333333333', name: 'Warm' }, timestamp: '2026-11-26T00:00:00.000Z', traceId: 't' },
};

describe('@parley/sdk retries 429 and 503 as Retry-After says, within bounds', () => {
  let server: Server;
  let baseUrl: string;
  let script: Answer[] = [];
  let seen: { key: string | undefined; body: string }[] = [];
  let waits: number[] = [];
  const NOW = Date.parse('2026-11-26T12:00:00Z');
  const timing: Timing = { now: () => NOW, sleep: async (ms) => void waits.push(ms) };

  const read = (request: IncomingMessage) => new Promise<string>((resolve) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString()));
    request.on('end', () => resolve(text));
  });

  before(async () => {
    server = createServer((request, response) => {
      void read(request).then((body) => {
        seen.push({ key: request.headers['idempotency-key'] as string | undefined, body });
        const answer = script.shift() ?? refused(500, 'INTERNAL');
        response.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8', ...answer.headers });
        response.end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    script = [];
    seen = [];
    waits = [];
  });

  const create = (options: Parameters<typeof createParley>[0]) => createParley(options).organization(V, O)
    .createLlmGenerationStrategy({ body: { name: 'Warm', type: 'text_to_speech', parameters: {} } });

  it('waits as Retry-After asks (seconds, or a date) and sends the same request, key included', async () => {
    script = [refused(429, 'RATE_LIMITED', '2'), refused(503, 'UNAVAILABLE', new Date(NOW + 5_000).toUTCString()), created];
    const strategy = await create({ baseUrl, timing });
    assert.equal(strategy.name, 'Warm');
    assert.deepEqual(waits, [2_000, 5_000]);
    assert.equal(seen.length, 3);
    assert.equal(new Set(seen.map((s) => s.key)).size, 1, 'one Idempotency-Key across the retries');
    assert.match(seen[0]?.key ?? '', /^sdk_/);
    assert.deepEqual(seen.map((s) => JSON.parse(s.body).name), ['Warm', 'Warm', 'Warm']);
  });

  it('without Retry-After, waits the base delay doubled each time', async () => {
    script = [refused(503, 'UNAVAILABLE'), refused(503, 'UNAVAILABLE'), created];
    await create({ baseUrl, timing, retry: { baseDelayMs: 100 } });
    assert.deepEqual(waits, [100, 200]);
  });

  it('gives up after the retries, with the last answer as a ParleyError', async () => {
    script = [refused(429, 'RATE_LIMITED', '1'), refused(429, 'RATE_LIMITED', '1'), refused(429, 'RATE_LIMITED', '1'), created];
    const err = await create({ baseUrl, timing, retry: { retries: 2 } }).then(() => assert.fail('resolved'), (e: unknown) => e as ParleyError);
    assert.ok(err instanceof ParleyError);
    assert.deepEqual([err.status, err.code, err.traceId], [429, 'RATE_LIMITED', 'trace-429']);
    assert.equal(seen.length, 3);
    assert.deepEqual(waits, [1_000, 1_000]);
  });

  it('does not wait longer than maxDelayMs: a longer Retry-After is thrown at once', async () => {
    script = [refused(503, 'UNAVAILABLE', '120'), created];
    const err = await create({ baseUrl, timing }).then(() => assert.fail('resolved'), (e: unknown) => e as ParleyError);
    assert.equal(err.status, 503);
    assert.deepEqual(waits, []);
    assert.equal(seen.length, 1);
  });

  it('retries nothing else, and nothing at all with retry: false', async () => {
    const failure = (promise: Promise<unknown>) => promise.then(() => assert.fail('resolved'), (e: unknown) => e as ParleyError);
    script = [refused(500, 'INTERNAL'), created];
    assert.equal((await failure(create({ baseUrl, timing }))).status, 500);
    script = [refused(429, 'RATE_LIMITED', '1'), created];
    assert.equal((await failure(create({ baseUrl, timing, retry: false }))).status, 429);
    assert.deepEqual(waits, []);
    assert.equal(seen.length, 2);
  });

  it('an answer without the envelope is a ParleyError with HTTP_<status> and X-Request-Id', async () => {
    script = [{ status: 502, headers: { 'content-type': 'text/html', 'x-request-id': 'proxy-1' }, body: '<html>Bad gateway</html>' }];
    const err = await create({ baseUrl, timing }).then(() => assert.fail('resolved'), (e: unknown) => e as ParleyError);
    assert.deepEqual([err.status, err.code, err.traceId], [502, 'HTTP_502', 'proxy-1']);
    script = [{ status: 200, headers: { 'content-type': 'text/html' }, body: '<html>Some other service</html>' }];
    const other = await create({ baseUrl, timing }).then(() => assert.fail('resolved'), (e: unknown) => e as ParleyError);
    assert.deepEqual([other.status, other.code], [200, 'HTTP_200']);
  });
});
