/**
 * Issue 10, correctness under bad input (items 11, 12, 14, 15, 16): hostile JSON, time zones,
 * the Bearer scheme's case, and requests Node's own HTTP parser refuses.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { ManualClock } from '../../src/clock.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { ADMIN_TOKEN, buildTestApp, createApiToken, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { parseResponses, rawClient } from './support.ts';

const DEPTH = 5_000;
/** `[[[…"x"…]]]` nested DEPTH levels, as JSON text (JSON.stringify itself would overflow on the way back). */
const deepJson = (depth = DEPTH) => `${'['.repeat(depth)}"x"${']'.repeat(depth)}`;

function assertEnvelope(body: any, code: string): void {
  assert.equal(body.success, false);
  assert.equal(body.data, null);
  assert.equal(body.error.code, code);
  assert.ok(Array.isArray(body.error.details));
  assert.equal(typeof body.traceId, 'string');
  assert.match(body.timestamp, /^\d{4}-\d\d-\d\dT/);
}

for (const dialect of DIALECTS) {
  describe(`bad input (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    let agentId: string;
    let assistantId: string;
    const clock = new ManualClock('2026-11-18T10:00:00Z');
    const post = (url: string, json: string, headers: Record<string, string> = {}) => t.app.inject({
      method: 'POST', url, payload: json, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', ...headers },
    });
    const counts = async () => Promise.all(['assistants', 'agents', `agents/${agentId}/tasks`, 'calls'].map(async (list) => (await t.call('GET', `${a.orgPath}/${list}`)).json().totalElements));

    before(async () => {
      t = await buildTestApp(dialect, {}, { clock });
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      a = await createTenant(t);
      agentId = (await t.call('POST', `${a.orgPath}/agents`, { body: { name: 'Caller' } })).json().data.id;
      assistantId = (await t.call('POST', `${a.orgPath}/assistants`, { body: { name: 'Desk' } })).json().data.id;
    });
    after(() => t.close());

    it(`11: JSON nested ${DEPTH} levels deep in any stored field is a 400, never a 500, and stores nothing`, async () => {
      const before = await counts();
      const attempts = [
        post(`${a.orgPath}/agents/${agentId}/tasks`, `{"targetNumber":"+4930123456","userValues":{"a":${deepJson()}}}`),
        post(`${a.orgPath}/agents/${agentId}/tasks/batch`, `{"tasks":[{"targetNumber":"+4930123456","userValues":{"a":${deepJson()}}}]}`),
        post(`${a.orgPath}/assistants/${assistantId}/calls`, `{"userValues":{"a":${deepJson()}}}`),
        post(`${a.orgPath}/assistants`, `{"name":"Deep","extensions":[{"type":"end_call","parameters":{"message":${deepJson()}}}]}`),
        // With an Idempotency-Key the body is hashed as well: the same 400.
        post(`${a.orgPath}/agents/${agentId}/tasks`, `{"targetNumber":"+4930123456","userValues":{"a":${deepJson()}}}`, { 'idempotency-key': 'deep-1' }),
        post(`${a.orgPath}/agents`, `{"name":"Deep","x":${deepJson()}}`, { 'idempotency-key': 'deep-2' }),
      ];
      for (const res of await Promise.all(attempts)) {
        assert.equal(res.statusCode, 400, res.body);
        assertEnvelope(res.json(), 'VALIDATION_FAILED');
        assert.match(res.json().message, /nested deeper than 64 levels/);
      }
      // 64 levels are fine.
      const shallow = await post(`${a.orgPath}/agents/${agentId}/tasks`, `{"targetNumber":"+4930123456","userValues":{"a":${deepJson(60)}}}`);
      assert.equal(shallow.statusCode, 201, shallow.body);
      assert.deepEqual(await counts(), [before[0], before[1], before[2] + 1, before[3]]);
    });

    it('12: a lone surrogate anywhere, or a NUL however deep, is a 400 on both dialects, never a 500 or a silent U+FFFD', async () => {
      const before = await counts();
      const bodies: [string, string][] = [
        [`${a.orgPath}/assistants`, '{"name":"Lone \\ud800 surrogate"}'],
        [`${a.orgPath}/assistants`, '{"name":"Low \\udc00 first"}'],
        [`${a.orgPath}/agents/${agentId}/tasks`, '{"targetNumber":"+4930123456","userValues":{"k\\udbff":"v"}}'],
        [`${a.orgPath}/agents/${agentId}/tasks`, `{"targetNumber":"+4930123456","userValues":{"a":${'['.repeat(40)}"\\u0000"${']'.repeat(40)}}}`],
        [`${a.orgPath}/assistants/${assistantId}/calls`, '{"userValues":{"a":{"b":{"c":"nul \\u0000 here"}}}}'],
        [`${a.orgPath}/assistants/${assistantId}/calls`, '{"userValues":{"a":["\\ud83d"]}}'],
      ];
      for (const [url, json] of bodies) {
        const res = await post(url, json);
        assert.equal(res.statusCode, 400, `${json}: ${res.body}`);
        assertEnvelope(res.json(), 'VALIDATION_FAILED');
        assert.match(res.json().message, /NUL characters|lone UTF-16 surrogates/);
      }
      // A well-formed pair is text like any other, and reads back as it was sent.
      const pair = await post(`${a.orgPath}/assistants`, '{"name":"Smile \\ud83d\\ude00"}');
      assert.equal(pair.statusCode, 201, pair.body);
      assert.equal((await t.call('GET', pair.headers.location as string)).json().data.name, 'Smile \u{1F600}');
      assert.deepEqual(await counts(), [before[0] + 1, before[1], before[2], before[3]]);
    });

    it('14: expiresAt is compared as an instant, whatever offset it is written with', async () => {
      // 09:30 at -01:00 is 10:30Z, in the future (as text it sorts before 10:00Z).
      const future = await t.call('POST', `/api/v1/vendors/${a.vendorId}/api-tokens`, { body: { name: 'offset future', role: 'viewer', expiresAt: '2026-11-18T09:30:00-01:00' } });
      assert.equal(future.statusCode, 201, future.body);
      assert.equal(future.json().data.expiresAt, '2026-11-18T10:30:00.000Z');
      // 11:30 at +02:00 is 09:30Z, in the past (as text it sorts after 10:00Z).
      const past = await t.call('POST', `/api/v1/vendors/${a.vendorId}/api-tokens`, { body: { name: 'offset past', role: 'viewer', expiresAt: '2026-11-18T11:30:00+02:00' } });
      assert.equal(past.statusCode, 400, past.body);
      assert.equal(past.json().error.details[0].path, 'expiresAt');

      const token = future.json().data.token as string;
      assert.equal((await t.call('GET', a.orgPath, { token })).statusCode, 200);
      clock.set('2026-11-18T10:29:59Z');
      assert.equal((await t.call('GET', a.orgPath, { token })).statusCode, 200);
      clock.set('2026-11-18T10:30:00Z');
      assert.equal((await t.call('GET', a.orgPath, { token })).statusCode, 401);
      clock.set('2026-11-18T10:00:00Z');
    });

    it('15: the Bearer scheme is case-insensitive', async () => {
      const token = await createApiToken(t, a.vendorId, { role: 'viewer' });
      for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
        const res = await t.app.inject({ method: 'GET', url: a.orgPath, headers: { authorization: `${scheme} ${token}` } });
        assert.equal(res.statusCode, 200, `${scheme}: ${res.body}`);
      }
      assert.equal((await t.app.inject({ method: 'GET', url: a.orgPath, headers: { authorization: `Basic ${token}` } })).statusCode, 401);
    });

    it('16: requests the HTTP parser refuses (malformed, bad header, 431) are answered in the envelope, then closed', async () => {
      const port = (t.app.server.address() as AddressInfo).port;
      const cases: [string, number, string][] = [
        ['GET / HTTP/1.1 trailing-garbage\r\nHost: p\r\n\r\n', 400, 'VALIDATION_FAILED'],
        ['\u0001\u0002 nonsense\r\n\r\n', 400, 'VALIDATION_FAILED'],
        ['GET /healthz HTTP/1.1\r\nHost: p\r\nBad Header: x\r\n\r\n', 400, 'VALIDATION_FAILED'],
        ['POST /api/v1/vendors HTTP/1.1\r\nHost: p\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n{"a":1}', 400, 'VALIDATION_FAILED'],
        ['POST /api/v1/vendors HTTP/1.1\r\nHost: p\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 400, 'VALIDATION_FAILED'],
        [`GET /healthz HTTP/1.1\r\nHost: p\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'HEADERS_TOO_LARGE'],
        [`GET /healthz HTTP/1.1\r\nHost: p\r\n${Array.from({ length: 3000 }, (_, i) => `X-H${i}: v`).join('\r\n')}\r\n\r\n`, 431, 'HEADERS_TOO_LARGE'],
      ];
      for (const [request, status, code] of cases) {
        const client = await rawClient(port);
        client.socket.write(request);
        await client.whenClosed;
        const responses = parseResponses(client.received());
        assert.equal(responses.length, 1, `${JSON.stringify(request.slice(0, 60))}: ${client.received().slice(0, 300)}`);
        const [response] = responses;
        assert.equal(response?.status, status);
        assert.equal(response?.headers.connection, 'close');
        assert.match(response?.headers['content-type'] ?? '', /^application\/json/);
        const body = JSON.parse(response?.body ?? '');
        assertEnvelope(body, code);
        assert.equal(response?.headers['x-request-id'], body.traceId);
        assert.equal(body.timestamp, clock.now().toISOString(), 'the app clock stamps it');
      }
    });
  });
}
