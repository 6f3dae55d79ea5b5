/**
 * Issue 10, secrets and rights (items 7-10, 17, 18): each test is the attack a tenant (or a
 * stranger) would make, and checks it gets nothing it should not have.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/clock.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createApiToken, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { toolSchema } from '../helpers/fixtures.ts';
import { drain, enqueue } from '../events/support.ts';
import { callRecord, startWorld, type World } from '../calls/support/world.ts';
import { connect } from '../calls/support/client.ts';
import { freePort } from '../helpers/service-process.ts';

/** Any spelling of a loopback address a resolver may give for `localhost`. */
const LOOPBACK = /127\.0\.0\.1|::1\b/;

for (const dialect of DIALECTS) {
  describe(`secrets and rights (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    const clock = new ManualClock('2026-11-18T10:00:00Z');
    before(async () => {
      t = await buildTestApp(dialect, {}, { clock, logLevel: 'info' });
      a = await createTenant(t);
    });
    after(() => t.close());
    const tokensPath = () => `/api/v1/vendors/${a.vendorId}/api-tokens`;

    it('7: a narrow token replaying an admin\'s Idempotency-Key and body gets its own answer, never the admin\'s token', async () => {
      const body = { name: 'escalate', role: 'admin' };
      const key = { 'idempotency-key': 'mint-admin-1' };
      const first = await t.call('POST', tokensPath(), { body, headers: key });
      assert.equal(first.statusCode, 201, first.body);
      const adminMinted = first.json().data.token as string;

      // Narrowed to one organization, holding only tokens:write.
      const narrow = await createApiToken(t, a.vendorId, { permissions: ['tokens:write'], organizationId: a.organizationId });
      const replay = await t.call('POST', tokensPath(), { body, headers: key, token: narrow });
      assert.equal(replay.statusCode, 403, replay.body);
      assert.equal(replay.headers['idempotent-replayed'], undefined);
      assert.ok(!replay.body.includes(adminMinted), 'the admin\'s token leaked through the replay');

      // A token allowed to make the same request gets a new token of its own, not the first one.
      const peer = await createApiToken(t, a.vendorId, { role: 'admin' });
      const own = await t.call('POST', tokensPath(), { body, headers: key, token: peer });
      assert.equal(own.statusCode, 201, own.body);
      assert.notEqual(own.json().data.token, adminMinted);
      // And the admin still gets its own first answer back.
      const again = await t.call('POST', tokensPath(), { body, headers: key });
      assert.equal(again.json().data.token, adminMinted);
    });

    it('8: a kept (********) secret never follows a new destination: tool headers and signingSecret, hook secrets, SIP passwords', async () => {
      const tool = (serverUrl: string, headers: Record<string, string>, signingSecret: string) => ({
        type: 'tool_webhook', parameters: { name: 'lookup', serverUrl, schema: toolSchema('lookup'), headers, signingSecret },
      });
      const created = await t.call('POST', `${a.orgPath}/assistants`, {
        body: {
          name: 'Holder',
          extensions: [tool('https://tools.example.com/a', { Authorization: 'Bearer kept-secret' }, 'signing-kept')],
          callEventHooks: [{ type: 'call_ended', parameters: { url: 'https://hooks.example.com/a', secret: 'hook-kept' } }],
        },
      });
      assert.equal(created.statusCode, 201, created.body);
      const { id, extensions, callEventHooks } = created.json().data;
      const url = `${a.orgPath}/assistants/${id}`;
      const put = (extension: unknown, hook: { url: string; secret: string }) => t.call('PUT', url, {
        body: {
          name: 'Holder', systemPrompt: null, systemPromptGreeting: null, llmAudioContentGenerationStrategyId: null,
          extensions: [{ id: extensions[0].id, ...(extension as object) }],
          callEventHooks: [{ id: callEventHooks[0].id, type: 'call_ended', parameters: hook }],
        },
      });
      const stored = async () => (await t.db.kysely.selectFrom('assistants').select(['extensions', 'call_event_hooks']).where('id', '=', id).executeTakeFirstOrThrow());
      const before = await stored();

      const kept = tool('https://tools.example.com/a', { Authorization: '********' }, '********');
      const tools = await put(tool('https://attacker.example.net/a', { Authorization: '********' }, '********'), { url: 'https://hooks.example.com/a', secret: '********' });
      assert.equal(tools.statusCode, 400, tools.body);
      assert.deepEqual(tools.json().error.details.map((d: { path: string }) => d.path).sort(), [
        'extensions[0].parameters.headers.Authorization',
        'extensions[0].parameters.signingSecret',
      ]);
      const hooks = await put(kept, { url: 'https://attacker.example.net/h', secret: '********' });
      assert.equal(hooks.statusCode, 400, hooks.body);
      assert.deepEqual(hooks.json().error.details.map((d: { path: string }) => d.path), ['callEventHooks[0].parameters.secret']);
      assert.deepEqual(await stored(), before, 'nothing changed');
      // Another path on the same server keeps them; new values for a new server are taken.
      assert.equal((await put(tool('https://tools.example.com/b', { Authorization: '********' }, '********'), { url: 'https://hooks.example.com/b', secret: '********' })).statusCode, 200);
      assert.equal((await put(tool('https://new.example.com/a', { Authorization: 'Bearer new' }, 'signing-new'), { url: 'https://new.example.com/h', secret: 'hook-new' })).statusCode, 200);

      const sip = await t.call('POST', `${a.orgPath}/sip/credentials`, {
        body: { name: 'Trunk', hostname: 'sip.example.com', port: 5060, transport: 'udp', username: 'u', password: 'sip-kept' },
      });
      assert.equal(sip.statusCode, 201, sip.body);
      const sipUrl = sip.headers.location as string;
      const sipBody = { name: 'Trunk', hostname: 'sip.example.com', port: 5060, transport: 'udp', username: 'u' };
      for (const moved of [{ hostname: 'sip.attacker.example.net' }, { port: 5080 }, { transport: 'tcp' }]) {
        for (const password of [undefined, '********']) {
          const res = await t.call('PUT', sipUrl, { body: { ...sipBody, ...moved, ...(password ? { password } : {}) } });
          assert.equal(res.statusCode, 400, `${JSON.stringify(moved)}: ${res.body}`);
          assert.deepEqual(res.json().error.details.map((d: { path: string }) => d.path), ['password']);
        }
      }
      assert.equal((await t.call('GET', sipUrl)).json().data.hostname, 'sip.example.com');
      assert.equal((await t.call('PUT', sipUrl, { body: { ...sipBody, name: 'Renamed' } })).statusCode, 200, 'the same server keeps it');
      assert.equal((await t.call('PUT', sipUrl, { body: { ...sipBody, hostname: 'sip2.example.com', password: 'new' } })).statusCode, 200);
    });

    it('9: a child token never outlives its creator, and revoking a token revokes everything it minted', async () => {
      const expiring = await t.call('POST', tokensPath(), { body: { name: 'parent', role: 'admin', expiresAt: '2026-11-18T10:00:04Z' } });
      const parent = expiring.json().data.token as string;
      const mint = (token: string, body: Record<string, unknown>) => t.call('POST', tokensPath(), { body: { name: 'child', role: 'admin', ...body }, token });
      for (const expiresAt of [undefined, null, '2026-11-18T10:00:05Z', '2026-11-18T09:00:05-01:00']) {
        const res = await mint(parent, expiresAt === undefined ? {} : { expiresAt });
        assert.equal(res.statusCode, 400, `${expiresAt}: ${res.body}`);
        assert.equal(res.json().error.details[0].path, 'expiresAt');
      }
      const child = await mint(parent, { expiresAt: '2026-11-18T11:00:04+01:00' });
      assert.equal(child.statusCode, 201, child.body);
      const childToken = child.json().data.token as string;
      assert.equal((await t.call('GET', a.orgPath, { token: childToken })).statusCode, 200);
      clock.set('2026-11-18T10:00:04Z');
      assert.equal((await t.call('GET', a.orgPath, { token: parent })).statusCode, 401);
      assert.equal((await t.call('GET', a.orgPath, { token: childToken })).statusCode, 401, 'the child expired with its parent');
      clock.set('2026-11-18T10:00:00Z');

      // Revocation goes down the line: parent -> child -> grandchild.
      const root = await createApiToken(t, a.vendorId, { role: 'admin' });
      const second = (await mint(root, {})).json().data.token as string;
      const third = (await mint(second, {})).json().data.token as string;
      assert.equal((await t.call('GET', a.orgPath, { token: third })).statusCode, 200);
      const list = (await t.call('GET', `${tokensPath()}?size=100`)).json().data as { id: string; prefix: string }[];
      const rootId = list.find((x) => root.startsWith(`${x.prefix}_`))?.id;
      assert.equal((await t.call('DELETE', `${tokensPath()}/${rootId}`)).statusCode, 200);
      for (const token of [root, second, third]) assert.equal((await t.call('GET', a.orgPath, { token })).statusCode, 401);
    });

    it('10: a key claimed by a create that crashed (kill -9) blocks for a minute, not 24 hours', async () => {
      const key = { 'idempotency-key': 'crashed-create' };
      const body = { name: 'Crashed' };
      const first = await t.call('POST', `${a.orgPath}/agents`, { body, headers: key });
      assert.equal(first.statusCode, 201, first.body);
      // As a process killed after claiming the key and before answering leaves it: the claim, no
      // answer, and no agent.
      assert.equal((await t.call('DELETE', first.headers.location as string)).statusCode, 200);
      await t.db.kysely.updateTable('idempotency_keys').set({ status_code: null, response_body: null, location: null }).where('key', '=', key['idempotency-key']).execute();

      clock.advance(30_000);
      const early = await t.call('POST', `${a.orgPath}/agents`, { body, headers: key });
      assert.equal(early.statusCode, 409, early.body);
      assert.match(early.json().message, /still running/);
      clock.advance(31_000);
      const later = await t.call('POST', `${a.orgPath}/agents`, { body, headers: key });
      assert.equal(later.statusCode, 201, later.body);
      assert.equal(later.headers['idempotent-replayed'], undefined);
      assert.notEqual(later.json().data.id, first.json().data.id);
      clock.set('2026-11-18T10:00:00Z');
    });

    it('17: a webhook delivery refused by the egress policy tells the tenant so, without the address the name resolved to', async () => {
      const created = await t.call('POST', `${a.orgPath}/assistants`, {
        body: { name: 'Prober', callEventHooks: [{ type: 'call_ended', parameters: { url: 'http://localhost:9/probe', secret: 'probe-secret' } }] },
      });
      assert.equal(created.statusCode, 201, created.body);
      await enqueue(t, { organizationId: a.organizationId, sourceKind: 'assistant', sourceId: created.json().data.id, type: 'call_ended', payload: { callId: 'probe' } }, clock.now());
      await drain(t);
      const deliveries = await t.call('GET', `${a.orgPath}/webhook-deliveries`);
      const [delivery] = deliveries.json().data;
      assert.match(delivery.lastError, /refused by the egress policy/);
      const detail = await t.call('GET', `${a.orgPath}/webhook-deliveries/${delivery.id}`);
      assert.doesNotMatch(deliveries.body + detail.body, LOOPBACK, 'the tenant reads the internal address');
      assert.match(t.logs(), /localhost resolved to (127\.0\.0\.1|::1)/, 'the log keeps it');
    });

    it('17: SIP validation refused by the egress policy, or failing to connect, never names the resolved address', async () => {
      const refused = await t.call('POST', `${a.orgPath}/sip/credentials/validate`, {
        body: { hostname: 'localhost', port: 9, transport: 'tcp', username: 'u', password: 'p' },
      });
      assert.equal(refused.statusCode, 400, refused.body);
      assert.match(refused.json().error.details[0].message, /refused by the egress policy/);
      assert.doesNotMatch(refused.body, LOOPBACK);
      assert.match(t.logs(), /"address":"(127\.0\.0\.1|::1)"[^\n]*refused by the egress policy/);

      // Allowed by the operator (loopback here): a refused connection says "localhost", not its address.
      const allowed = await buildTestApp(dialect, { PARLEY_EGRESS_ALLOW: '127.0.0.0/8,::1' });
      try {
        const tenant = await createTenant(allowed);
        const res = await allowed.call('POST', `${tenant.orgPath}/sip/credentials/validate`, {
          body: { hostname: 'localhost', port: 9, transport: 'tcp', username: 'u', password: 'p' },
        });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().data.successful, false);
        assert.match(res.json().data.reason, /localhost/);
        assert.doesNotMatch(res.body, LOOPBACK);
      } finally {
        await allowed.close();
      }
    });

    it('18: the call token never reaches the log, however its query key is spelled', async () => {
      const assistant = await t.call('POST', `${a.orgPath}/assistants`, { body: { name: 'Caller' } });
      const call = await t.call('POST', `${a.orgPath}/assistants/${assistant.json().data.id}/calls`, { body: {} });
      assert.equal(call.statusCode, 201, call.body);
      const { id, websocketUrl } = call.json().data;
      const real = new URL(websocketUrl).searchParams.get('token') as string;
      const secret = (i: number) => `leak${i}${randomBytes(12).toString('hex')}`;
      const spellings = (i: number): [string, string[]] => {
        const values = [secret(i), secret(i + 100)];
        const [v, w] = values;
        const queries = [`token=${v}`, `TOKEN=${v}`, `%74oken=${v}`, `to%6Ben=${v}`, `%54%4F%4B%45%4E=${v}`, `token=${v}&token=${w}`,
          `x=1&%74oken=${v}&TOKEN=${w}`, `access_token=${v}`, `Access%5FToken=${v}`, `token%5B%5D=${v}`, `%zz=${v}`];
        return [queries[i] as string, values];
      };
      const leaked: string[] = [real];
      for (let i = 0; i < 11; i++) {
        const [query, values] = spellings(i);
        leaked.push(...values);
        await t.app.inject({ method: 'GET', url: `/api/v1/calls/${id}/ws?${query}` });
      }
      await t.app.inject({ method: 'GET', url: `/api/v1/calls/${id}/ws?%74oken=${real}` });
      const logs = t.logs();
      assert.match(logs, /calls\/[^"]*\/ws\?%74oken=\[Redacted\]/, 'the request lines are logged, scrubbed');
      for (const value of leaked) assert.ok(!logs.includes(value), `a token value reached the log (${value.slice(0, 8)}…)`);
    });
  });
}

describe('18: files and the admin token at start', () => {
  // PostgreSQL keeps no files of ours: the data folder is SQLite's (and the generated secret key's).
  it('a data folder Parley creates is 0700, the database, its WAL and the secret key 0600', async () => {
    const root = mkdtempSync(join(tmpdir(), 'parley-modes-'));
    try {
      const filename = join(root, 'fresh', 'data', 'parley.db');
      const config = loadConfig({ PARLEY_ADMIN_TOKEN: 'x'.repeat(32) }, { database: { dialect: 'sqlite', filename } });
      const db = openDatabase(config.database);
      await db.kysely.schema.createTable('t').addColumn('x', 'integer').execute();
      const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
      assert.equal(mode(join(root, 'fresh', 'data')), '700');
      assert.equal(mode(join(root, 'fresh')), '700');
      for (const file of ['parley.db', 'parley.db-wal', 'parley.db-shm', 'secret.key']) assert.equal(mode(join(root, 'fresh', 'data', file)), '600', file);
      await db.close();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('a weak PARLEY_ADMIN_TOKEN, or one shaped like an API token, is refused at start with a clear message', () => {
    const refused = (value: string) => assert.throws(() => loadConfig({ PARLEY_ADMIN_TOKEN: value, DATABASE_URL: 'sqlite::memory:' }), ConfigError);
    refused('short-admin-token');
    refused('x'.repeat(31));
    refused(`prl_abcdefghijkl_${'s'.repeat(40)}`);
    assert.equal(loadConfig({ PARLEY_ADMIN_TOKEN: 'x'.repeat(32), DATABASE_URL: 'sqlite::memory:' }).adminToken, 'x'.repeat(32));
    // The message `parley serve` prints before it exits (the CLI reads the configuration first).
    assert.throws(() => loadConfig({ PARLEY_ADMIN_TOKEN: 'letmein' }), /PARLEY_ADMIN_TOKEN must be at least 32 characters \(generate one: openssl rand -base64 32\)/);
  });
});

for (const dialect of DIALECTS) {
  describe(`17: a tool call refused by the egress policy (${dialect})`, () => {
    let w: World;
    before(async () => {
      w = await startWorld(dialect, { PARLEY_EGRESS_ALLOW: '' });
    });
    after(() => w.close());

    it('gives the LLM the generic string and the record "refused", never the address; the log keeps it', async () => {
      const assistantId = await w.createAssistant({
        name: 'Prober', systemPrompt: 'Use the tool.',
        extensions: [{ type: 'tool_webhook', parameters: { name: 'probe', serverUrl: 'http://localhost:9/probe', schema: toolSchema('probe') } }],
      });
      w.llm.respond = (body) => (body.messages.at(-1).role === 'user'
        ? { toolCalls: [{ id: 'p1', name: 'probe', arguments: '{"orderNumber":"1"}' }] }
        : { text: 'done' });
      const { id, client } = await w.open(assistantId);
      client.send({ type: 'user_message', text: 'probe it' });
      await client.next('assistant_message');
      client.send({ type: 'end' });
      await client.closed;
      const record = await callRecord(w, id);
      assert.equal(record.toolInvocations[0].outcome, 'refused');
      assert.doesNotMatch(JSON.stringify(record) + JSON.stringify(client.frames) + JSON.stringify(w.llm.requests), LOOPBACK);
      assert.match(w.logs(), /localhost resolved to (127\.0\.0\.1|::1)/);
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`17: a voice provider's base URL that fails to connect (${dialect})`, () => {
    it('the call\'s error frame and record say why without the address the name resolved to', { timeout: 30_000 }, async () => {
      // The address is allowed, so the connection is tried and refused by the socket, whose
      // error ("connect ECONNREFUSED 127.0.0.1:port") would name the resolved address.
      const closed = await freePort();
      const w = await startWorld(dialect, { PARLEY_EGRESS_ALLOW: '127.0.0.0/8,::1/128', DEEPGRAM_API_KEY: 'dg-key-0123456789', DEEPGRAM_BASE_URL: `http://127.0.0.1:${closed}` });
      try {
        const key = await w.api('POST', `${w.tenant.orgPath}/provider-credentials`, { provider: 'elevenlabs', apiKey: 'xi-key-0123456789', baseUrl: `http://localhost:${closed}` });
        assert.equal(key.status, 201, JSON.stringify(key.body));
        const strategy = await w.api('POST', `${w.tenant.orgPath}/llm-generation-strategies`, {
          name: 'Own voice', type: 'text_to_speech',
          parameters: { model: 'test-model', outputSampleRate: 16000, voice: { provider: 'elevenlabs', voiceId: 'Rachel', modelId: 'eleven_flash_v2_5' }, transcriber: { provider: 'deepgram', model: 'nova-3', language: 'en' } },
        });
        assert.equal(strategy.status, 201, JSON.stringify(strategy.body));
        const assistantId = await w.createAssistant({ name: 'Greeter', systemPromptGreeting: 'Hello.', llmAudioContentGenerationStrategyId: strategy.body.data.id });
        const call = await w.api('POST', `${w.tenant.orgPath}/assistants/${assistantId}/calls`, { audio: { encoding: 'pcm_s16le', sampleRate: 16000 } });
        const client = await connect(call.body.data.websocketUrl);
        const error = await client.next('error');
        assert.match(error.message, /tts:elevenlabs failed/);
        assert.equal((await client.next('call_ended')).reason, 'error');
        const record = await callRecord(w, call.body.data.id);
        assert.equal(record.failure.source, 'tts:elevenlabs');
        assert.doesNotMatch(JSON.stringify(record) + JSON.stringify(client.frames), LOOPBACK);
      } finally {
        await w.close();
      }
    });
  });
}
