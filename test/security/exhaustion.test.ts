/**
 * Issue 10, resource exhaustion (items 1-3): each test performs the attack against a service
 * listening on loopback and measures what it costs (memory, descriptors, connections).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { UNFLUSHED_OUTPUT } from '../../src/http/backpressure.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { ADMIN_TOKEN, buildTestApp, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { collectGarbage, connectionsOf, getFrom, openDescriptors, parseResponses, rawClient, rssMiB, waitFor, type RawClient } from './support.ts';

/** Memory one refused placeholder attack may add (without the fix it builds a 240 MB string). */
const PLACEHOLDER_RSS_MIB = 64;
/** Memory 30 clients that never read a 9 MB page may add: the 64 MiB budget plus slack (without the fix, 700+ MiB). */
const STALLED_READERS_RSS_MIB = 160;
/** Memory one connection pipelining 20 such requests may add: 4 answers in progress at most (without the fix, 250+ MiB). */
const PIPELINING_RSS_MIB = 64;
const SLOW_CLIENTS = 100;
const PER_ADDRESS = 20;

const MiB = 1024 * 1024;

for (const dialect of DIALECTS) {
  describe(`exhaustion: placeholders, slow bodies, readers that never read (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    let port: number;
    before(async () => {
      t = await buildTestApp(dialect, { PARLEY_REQUEST_TIMEOUT_SECONDS: '1', PARLEY_MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS) });
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      port = (t.app.server.address() as AddressInfo).port;
      a = await createTenant(t);
    });
    after(() => t.close());

    it('1: 20,000 placeholders filled with 12,000 characters are refused at call start with a 400 naming userValues, in bounded memory', async () => {
      const create = await t.call('POST', `${a.orgPath}/assistants`, {
        body: { name: 'Expander', systemPrompt: '{{a}}'.repeat(20_000), systemPromptGreeting: '{{a}}'.repeat(2_000) },
      });
      assert.equal(create.statusCode, 201, create.body);
      const calls = `${a.orgPath}/assistants/${create.json().data.id}/calls`;
      collectGarbage();
      const before = rssMiB();

      const huge = await t.call('POST', calls, { body: { userValues: { a: 'x'.repeat(12_000) } } });
      assert.equal(huge.statusCode, 400, huge.body);
      assert.deepEqual(huge.json().error.details.map((d: { path: string }) => d.path), ['userValues']);
      assert.match(huge.json().error.details[0].message, /systemPrompt past its limit of 100000 characters/);
      // The greeting alone, too: 2,000 placeholders of 6 characters pass its 10,000.
      const reply = await t.call('PUT', `${a.orgPath}/assistants/${create.json().data.id}`, {
        body: { name: 'Expander', systemPrompt: null, systemPromptGreeting: '{{a}}'.repeat(2_000), llmAudioContentGenerationStrategyId: null, extensions: [], callEventHooks: [] },
      });
      assert.equal(reply.statusCode, 200, reply.body);
      const greeting = await t.call('POST', calls, { body: { userValues: { a: 'x'.repeat(6) } } });
      assert.equal(greeting.statusCode, 400, greeting.body);
      assert.match(greeting.json().error.details[0].message, /systemPromptGreeting past its limit of 10000 characters/);
      // userValues themselves are bounded: 16 KiB as JSON.
      const tooMany = await t.call('POST', calls, { body: { userValues: { a: 'x'.repeat(17 * 1024) } } });
      assert.equal(tooMany.statusCode, 400, tooMany.body);
      assert.equal(tooMany.json().error.details[0].path, 'userValues');

      collectGarbage();
      const grown = rssMiB() - before;
      assert.ok(grown < PLACEHOLDER_RSS_MIB, `RSS grew ${grown.toFixed(0)} MiB (limit ${PLACEHOLDER_RSS_MIB})`);
      const stored = await t.call('GET', `${a.orgPath}/calls`);
      assert.equal(stored.json().totalElements, 0, 'no call was stored');
    });

    it(`2: ${SLOW_CLIENTS} slow uploads from one address hold at most ${PER_ADDRESS} connections, each cut at the request timeout; /healthz answers throughout`, async () => {
      const descriptorsBefore = openDescriptors();
      const slowPost = 'POST /api/v1/vendors HTTP/1.1\r\nHost: parley\r\nContent-Type: application/json\r\n' +
        `Authorization: Bearer ${ADMIN_TOKEN}\r\nContent-Length: 1000000\r\n\r\n{"name":"`;
      const clients: RawClient[] = [];
      for (let i = 0; i < SLOW_CLIENTS; i++) {
        const client = await rawClient(port);
        client.socket.write(slowPost);
        clients.push(client);
      }
      await waitFor('the connections over the per-address cap to be closed', () => clients.filter((c) => c.closed).length >= SLOW_CLIENTS - PER_ADDRESS);
      assert.ok(await connectionsOf(t.app.server) <= PER_ADDRESS, 'the server holds no more than the cap');
      // Another address is not locked out by the flood.
      assert.equal((await getFrom('127.0.0.2', port, '/healthz')).status, 200);

      // The ones held are cut when the request timeout (1 s) passes, with a 408 in the envelope.
      await waitFor('every slow upload to be cut', () => clients.every((c) => c.closed));
      const cut = clients.map((c) => parseResponses(c.received())).filter((responses) => responses.length > 0);
      assert.equal(cut.length, PER_ADDRESS, 'each held connection got an answer before it was closed');
      for (const [response] of cut) {
        assert.equal(response?.status, 408);
        assert.equal(JSON.parse(response?.body ?? '{}').error.code, 'REQUEST_TIMEOUT');
      }
      await waitFor('the server to hold no connection', async () => (await connectionsOf(t.app.server)) === 0);
      const descriptorsAfter = openDescriptors();
      // Slack for the database pool (5 connections on PostgreSQL), far below the 20 connections held without the timeout.
      assert.ok(descriptorsAfter <= descriptorsBefore + 6, `descriptors ${descriptorsBefore} -> ${descriptorsAfter}`);
    });

    it('2: a 401 answered before the body arrived closes the connection; the rest of the body is never waited for', async () => {
      const client = await rawClient(port);
      client.socket.write('POST /api/v1/vendors HTTP/1.1\r\nHost: parley\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"name":"');
      await client.whenClosed;
      // Without the early close the server keeps reading until the request timeout, then answers a 408 as well.
      const responses = parseResponses(client.received());
      assert.deepEqual(responses.map((r) => [r.status, r.headers.connection]), [[401, 'close']]);
      assert.equal(JSON.parse(responses[0]?.body ?? '{}').error.code, 'UNAUTHORIZED');
    });

    describe('3: clients that ask for large pages and never read', () => {
      const askFor = (path: string, count = 1) =>
        `GET ${path} HTTP/1.1\r\nHost: parley\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\n\r\n`.repeat(count);
      let page: string;
      before(async () => {
        // 100 assistants with 90,000-character prompts: one page of 100 is about 9 MB of JSON.
        for (let i = 0; i < 100; i++) {
          const res = await t.call('POST', `${a.orgPath}/assistants`, { body: { name: `Big ${i}`, systemPrompt: `${i} `.padEnd(90_000, 'p') } });
          assert.equal(res.statusCode, 201);
        }
        page = `${a.orgPath}/assistants?size=100`;
        const warm = await t.call('GET', page);
        assert.ok(warm.body.length > 9_000_000, `page of ${warm.body.length} bytes`);
      });

      it(`30 stalled readers: the process holds at most ${UNFLUSHED_OUTPUT.totalBytes / MiB} MiB for them, later ones get 503 with Retry-After`, async () => {
        collectGarbage();
        const before = rssMiB();
        const clients: RawClient[] = [];
        const statuses: number[] = [];
        for (let i = 0; i < 30; i++) {
          const client = await rawClient(port, { localAddress: `127.0.1.${i + 1}` });
          client.socket.write(askFor(page));
          const first = await client.firstChunk;
          client.socket.pause(); // and never read again
          statuses.push(Number(first.split(' ')[1]));
          if (statuses.at(-1) === 503) assert.match(first, /retry-after: \d+/i);
          clients.push(client);
        }
        collectGarbage();
        const grown = rssMiB() - before;
        const served = statuses.filter((s) => s === 200).length;
        assert.ok(grown < STALLED_READERS_RSS_MIB, `RSS grew ${grown.toFixed(0)} MiB (limit ${STALLED_READERS_RSS_MIB})`);
        assert.ok(served >= 3 && served < 20, `${served} pages served to stalled readers`);
        assert.equal(statuses.filter((s) => s === 503).length, 30 - served);

        // Once they are gone, their bytes are released and pages are served again.
        for (const client of clients) client.socket.destroy();
        await waitFor('the stalled connections to be released', async () => (await connectionsOf(t.app.server)) === 0);
        assert.equal((await t.call('GET', page)).statusCode, 200);
      });

      it('one connection pipelining 20 requests without reading is closed once it holds more than its share', async () => {
        collectGarbage();
        const before = rssMiB();
        const client = await rawClient(port);
        client.socket.write(askFor(page, 20));
        await client.firstChunk;
        client.socket.pause();
        await waitFor('the server to drop the connection', async () => (await connectionsOf(t.app.server)) === 0);
        collectGarbage();
        const grown = rssMiB() - before;
        assert.ok(grown < PIPELINING_RSS_MIB, `RSS grew ${grown.toFixed(0)} MiB (limit ${PIPELINING_RSS_MIB})`);
        client.socket.destroy();
        assert.equal((await t.call('GET', page)).statusCode, 200);
      });
    });
  });
}
