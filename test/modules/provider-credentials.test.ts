import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { PROVIDER_VARIABLES } from '../../src/calls/providers/registry.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { resolveProviderAccess } from '../../src/modules/providers/providers.service.ts';
import { buildTestApp, createApiToken, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/dialects.ts';

const READ_KEYS = ['accountSid', 'apiKey', 'baseUrl', 'createdAt', 'id', 'organizationId', 'provider', 'updatedAt'];
// Keys shaped so a test can search for them anywhere: responses, the table, the log.
const key = (name: string) => `sk-test-${name}-8f3a9c1d2e4b`;
const PLATFORM = {
  DEEPGRAM_API_KEY: key('platform-deepgram'),
  DEEPGRAM_BASE_URL: 'wss://deepgram.operator.example',
  ELEVENLABS_BASE_URL: 'https://elevenlabs.operator.example',
  OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', // never contacted: only resolved
  // Only 10.1.2.0/24 of the private ranges may be reached.
  PARLEY_EGRESS_ALLOW: '10.1.2.0/24',
};

describe('provider settings in the environment', () => {
  const load = (env: Record<string, string>) => loadConfig(env, { database: { dialect: 'sqlite', filename: ':memory:' }, secretKey: randomBytes(32) }, PROVIDER_VARIABLES);

  it('reads keys and base URLs, empty meaning none, and refuses a base URL that is not http(s) or ws(s) or carries credentials', () => {
    const config = load({ ELEVENLABS_API_KEY: 'e', DEEPGRAM_BASE_URL: 'wss://dg.example', CARTESIA_API_KEY: '' });
    assert.deepEqual(config.providerEnv, { ELEVENLABS_API_KEY: 'e', DEEPGRAM_BASE_URL: 'wss://dg.example' });
    for (const bad of ['ftp://dg.example', 'dg.example', 'wss://user:secret@dg.example']) {
      assert.throws(() => load({ DEEPGRAM_BASE_URL: bad }), (err: unknown) => err instanceof ConfigError && /DEEPGRAM_BASE_URL/.test(err.message) && !err.message.includes('secret'), bad);
    }
  });
});

for (const dialect of DIALECTS) {
  describe(`provider credentials (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    let url: string;
    const used: string[] = [];
    const bodies: string[] = [];
    const call: TestApp['call'] = async (method, path, opts) => {
      const res = await t.call(method, path, opts);
      bodies.push(res.body);
      return res;
    };
    const create = async (body: Record<string, unknown>, path = url) => {
      if (typeof body.apiKey === 'string') used.push(body.apiKey);
      const res = await call('POST', path, { body });
      assert.equal(res.statusCode, 201, res.body);
      return res;
    };
    const access = (organizationId: string, provider: Parameters<typeof resolveProviderAccess>[2]) => resolveProviderAccess(t.ctx, organizationId, provider);

    before(async () => {
      t = await buildTestApp(dialect, PLATFORM, { logLevel: 'debug' });
    });
    // Each test has an organization of its own, so none depends on what another left behind.
    beforeEach(async () => {
      a = await createTenant(t);
      url = `${a.orgPath}/provider-credentials`;
    });
    after(async () => {
      for (const body of bodies) for (const k of used) assert.ok(!body.includes(k), 'no response ever carries a key');
      const logs = t.logs();
      assert.ok(logs.includes('provider-credentials'), 'the requests were logged');
      for (const k of [...used, PLATFORM.DEEPGRAM_API_KEY]) assert.ok(!logs.includes(k), 'no key in the log');
      await t.close();
    });

    it('creates (201, Location), reads, lists, replaces and deletes; the key always shows as the mask', async () => {
      const created = await create({ provider: 'elevenlabs', apiKey: key('eleven'), baseUrl: 'https://api.eu.elevenlabs.example' });
      const data = created.json().data;
      assert.deepEqual(Object.keys(data).sort(), READ_KEYS);
      assert.deepEqual({ ...data, id: 'x', createdAt: 'x', updatedAt: 'x' }, {
        id: 'x', organizationId: a.organizationId, provider: 'elevenlabs', apiKey: '********', baseUrl: 'https://api.eu.elevenlabs.example', accountSid: null, createdAt: 'x', updatedAt: 'x',
      });
      const location = created.headers.location as string;
      assert.equal(location, `${url}/${data.id}`);
      assert.deepEqual((await call('GET', location)).json().data, data);
      const list = (await call('GET', url)).json();
      assert.deepEqual([list.totalElements, list.data], [1, [data]]);

      assert.equal((await call('PUT', location, { body: { provider: 'elevenlabs', apiKey: key('eleven-2') } })).statusCode, 200);
      used.push(key('eleven-2'));
      const read = (await call('GET', location)).json().data;
      assert.deepEqual([read.baseUrl, read.apiKey], [null, '********']);
      assert.ok(read.updatedAt >= data.updatedAt);
      assert.equal((await access(a.organizationId, 'elevenlabs'))?.apiKey, key('eleven-2'));

      assert.equal((await call('DELETE', location)).statusCode, 200);
      assert.equal((await call('GET', location)).statusCode, 404);
      assert.equal((await call('DELETE', location)).statusCode, 404);
      assert.equal((await call('PUT', location, { body: { provider: 'elevenlabs', apiKey: 'k' } })).statusCode, 404);
      assert.equal((await call('GET', url)).json().totalElements, 0);
    });

    it('stores the key sealed: the table holds no plain key', async () => {
      const location = (await create({ provider: 'cartesia', apiKey: key('cartesia') })).headers.location as string;
      const { rows } = await sql<Record<string, unknown>>`select * from provider_credentials`.execute(t.db.kysely);
      assert.equal(rows.length, 1);
      assert.match(String(rows[0]?.api_key_sealed), /^enc:v1:/);
      assert.ok(!JSON.stringify(rows).includes(key('cartesia')));
      assert.equal((await access(a.organizationId, 'cartesia'))?.apiKey, key('cartesia'), 'it opens again');
      // Sealed under another PARLEY_SECRET_KEY: an error that names the credential, never the sealed text.
      const foreign = 'enc:v1:' + randomBytes(48).toString('base64');
      await t.db.kysely.updateTable('provider_credentials').set({ api_key_sealed: foreign }).where('organization_id', '=', a.organizationId).execute();
      await assert.rejects(access(a.organizationId, 'cartesia'), (err: Error) => /cartesia provider credential .* cannot be opened/.test(err.message) && !err.message.includes(foreign.slice(7, 20)));
      assert.equal((await call('DELETE', location)).statusCode, 200);
    });

    it('PUT keeps the key when it is left out or masked, but never when baseUrl changes', async () => {
      const location = (await create({ provider: 'openai', apiKey: key('openai'), baseUrl: 'https://llm.example.com/v1' })).headers.location as string;
      const put = (body: Record<string, unknown>) => call('PUT', location, { body: { provider: 'openai', ...body } });
      // The same destination, spelled with a trailing slash and an upper-case host: kept.
      assert.equal((await put({ baseUrl: 'https://LLM.example.com/v1' })).statusCode, 200);
      assert.equal((await put({ apiKey: '********', baseUrl: 'https://llm.example.com/v1' })).statusCode, 200);
      assert.equal((await access(a.organizationId, 'openai'))?.apiKey, key('openai'));

      for (const baseUrl of ['https://attacker.example.com/v1', 'https://llm.example.com/v2', null, undefined]) {
        for (const apiKey of [undefined, '********']) {
          const res = await put({ ...(baseUrl === undefined ? {} : { baseUrl }), ...(apiKey ? { apiKey } : {}) });
          assert.equal(res.statusCode, 400, `${baseUrl} ${apiKey}`);
          assert.deepEqual(res.json().error.details, [{ path: 'apiKey', message: 'must be sent again: baseUrl changed, and a kept key never follows a new destination' }]);
        }
      }
      assert.equal((await call('GET', location)).json().data.baseUrl, 'https://llm.example.com/v1', 'nothing changed');
      assert.equal((await put({ baseUrl: 'https://other.example.com/v1', apiKey: key('openai-2') })).statusCode, 200);
      used.push(key('openai-2'));
      assert.deepEqual(await access(a.organizationId, 'openai'), {
        apiKey: key('openai-2'), baseUrl: 'https://other.example.com/v1', source: 'organization', egressChecked: true, accountSid: null,
      });
      assert.equal((await call('DELETE', location)).statusCode, 200);
    });

    it('PATCH keeps the key for a change that stays at the same destination, and asks for it again when baseUrl moves', async () => {
      const location = (await create({ provider: 'openai', apiKey: key('openai-patch'), baseUrl: 'https://llm.example.com/v1' })).headers.location as string;
      const patch = (body: Record<string, unknown>) => call('PATCH', location, { body, headers: { 'content-type': 'application/merge-patch+json' } });
      const moved = await patch({ baseUrl: 'https://attacker.example.com/v1' });
      assert.equal(moved.statusCode, 400, moved.body);
      assert.deepEqual(moved.json().error.details.map((d: { path: string }) => d.path), ['apiKey']);
      const cleared = await patch({ baseUrl: null });
      assert.equal(cleared.statusCode, 400, 'removing the base URL is a new destination too');
      assert.equal((await patch({ provider: 'deepgram' })).statusCode, 400);
      const read = (await call('GET', location)).json().data;
      assert.deepEqual([read.provider, read.baseUrl, read.apiKey], ['openai', 'https://llm.example.com/v1', '********'], 'nothing changed');
      assert.equal((await patch({ baseUrl: 'https://other.example.com/v1', apiKey: key('openai-patch-2') })).statusCode, 200);
      used.push(key('openai-patch-2'));
      assert.deepEqual(await access(a.organizationId, 'openai'), {
        apiKey: key('openai-patch-2'), baseUrl: 'https://other.example.com/v1', source: 'organization', egressChecked: true, accountSid: null,
      });
      assert.equal((await call('DELETE', location)).statusCode, 200);
    });

    it('one credential per provider: a second is a 409 naming provider; the list filters and sorts by provider', async () => {
      const first = await create({ provider: 'deepgram', apiKey: key('deepgram') });
      const second = await call('POST', url, { body: { provider: 'deepgram', apiKey: key('deepgram-2') } });
      used.push(key('deepgram-2'));
      assert.equal(second.statusCode, 409);
      assert.equal(second.json().error.code, 'CONFLICT');
      assert.deepEqual(second.json().error.details.map((d: { path: string }) => d.path), ['provider']);
      assert.match(second.json().message, /deepgram/);
      const twilio = await create({ provider: 'twilio', apiKey: key('twilio'), accountSid: 'AC0123456789abcdef0123456789abcdef' });
      assert.equal(twilio.json().data.accountSid, 'AC0123456789abcdef0123456789abcdef');
      const providers = (res: { json(): { data: { provider: string }[] } }) => res.json().data.map((c) => c.provider);
      assert.deepEqual(providers(await call('GET', url)), ['deepgram', 'twilio']);
      assert.deepEqual(providers(await call('GET', `${url}?sort=provider,desc`)), ['twilio', 'deepgram']);
      assert.deepEqual(providers(await call('GET', `${url}?sort=createdAt,desc&size=1`)).length, 1);
      const filtered = (await call('GET', `${url}?provider=twilio`)).json();
      assert.deepEqual([filtered.totalElements, filtered.data.map((c: { id: string }) => c.id)], [1, [twilio.json().data.id]]);
      assert.deepEqual((await call('GET', `${url}?provider=cartesia`)).json().totalElements, 0);
      assert.equal((await call('GET', `${url}?provider=azure`)).statusCode, 400);
      assert.equal((await call('GET', `${url}?sort=apiKey,asc`)).statusCode, 400);
      for (const res of [first, twilio]) assert.equal((await call('DELETE', res.headers.location as string)).statusCode, 200);
    });

    it('a literal private, loopback or metadata baseUrl is a 400 unless PARLEY_EGRESS_ALLOW names it', async () => {
      for (const baseUrl of ['http://127.0.0.1:9000', 'ws://[::1]:9000', 'http://169.254.169.254/latest', 'https://10.9.9.9', 'http://0x7f.1/', 'wss://192.168.1.10']) {
        const res = await call('POST', url, { body: { provider: 'deepgram', apiKey: 'k', baseUrl } });
        assert.equal(res.statusCode, 400, baseUrl);
        assert.deepEqual(res.json().error.details.map((d: { path: string }) => d.path), ['baseUrl'], baseUrl);
        assert.match(res.json().error.details[0].message, /egress policy/);
      }
      const allowed = await create({ provider: 'deepgram', apiKey: key('deepgram-private'), baseUrl: 'ws://10.1.2.3:8080' });
      // A name is judged when the voice code connects, on the address it resolves to.
      const named = await call('PUT', allowed.headers.location as string, { body: { provider: 'deepgram', apiKey: 'k', baseUrl: 'wss://stt.internal.example' } });
      assert.equal(named.statusCode, 200);
      assert.equal((await call('DELETE', allowed.headers.location as string)).statusCode, 200);
    });

    it('rejects invalid bodies, naming the field, and stores nothing', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ provider: 'azure', apiKey: 'k' }, 'provider'],
        [{ provider: 'deepgram' }, 'apiKey'],
        [{ provider: 'deepgram', apiKey: '' }, 'apiKey'],
        [{ provider: 'deepgram', apiKey: 'line\r\nbreak' }, 'apiKey'],
        [{ provider: 'deepgram', apiKey: '********' }, 'apiKey'],
        [{ provider: 'deepgram', apiKey: 'k', baseUrl: 'ftp://files.example.com' }, 'baseUrl'],
        [{ provider: 'deepgram', apiKey: 'k', baseUrl: 'https://user:pass@stt.example.com' }, 'baseUrl'],
        [{ provider: 'deepgram', apiKey: 'k', baseUrl: 'https://stt.example.com/?key=1' }, 'baseUrl'],
        [{ provider: 'deepgram', apiKey: 'k', baseUrl: 'https://stt.example.com/#x' }, 'baseUrl'],
        [{ provider: 'deepgram', apiKey: 'k', baseUrl: 'not a url' }, 'baseUrl'],
        [{ provider: 'deepgram', apiKey: 'k', accountSid: 'AC0123456789abcdef0123456789abcdef' }, 'accountSid'],
        [{ provider: 'twilio', apiKey: 'k', accountSid: 'AC123' }, 'accountSid'],
        [{ provider: 'twilio', apiKey: 'k', baseUrl: 'https://api.twilio.com' }, 'baseUrl'],
        [{ provider: 'deepgram', apiKey: 'k', colour: 'blue' }, 'colour'],
        [{ provider: 'deepgram' }, 'apiKey'],
        [{ provider: 'anthropic', apiKey: null }, 'apiKey'],
        [{ provider: 'openai_compatible' }, 'baseUrl'],
        [{ provider: 'openai_compatible', apiKey: 'k', baseUrl: null }, 'baseUrl'],
      ];
      for (const [body, path] of cases) {
        const res = await call('POST', url, { body });
        assert.equal(res.statusCode, 400, JSON.stringify(body));
        assert.ok(res.json().error.details.some((d: { path: string }) => d.path === path), `${path}: ${res.body}`);
      }
      assert.equal((await call('GET', url)).json().totalElements, 0);
      const location = (await create({ provider: 'deepgram', apiKey: key('deepgram-3') })).headers.location as string;
      const changed = await call('PUT', location, { body: { provider: 'cartesia' } });
      assert.equal(changed.statusCode, 400);
      assert.deepEqual(changed.json().error.details.map((d: { path: string }) => d.path), ['provider']);
      for (const [body] of cases.slice(5, 13)) assert.equal((await call('PUT', location, { body })).statusCode, 400, JSON.stringify(body));
      assert.equal((await access(a.organizationId, 'deepgram'))?.apiKey, key('deepgram-3'), 'unchanged');
      assert.equal((await call('DELETE', location)).statusCode, 200);
    });

    it('openai_compatible: baseUrl required, the key optional (null when none is stored), and a keyless one may move', async () => {
      const created = await create({ provider: 'openai_compatible', baseUrl: 'https://api.groq.example/openai/v1' });
      const location = created.headers.location as string;
      assert.deepEqual([created.json().data.apiKey, created.json().data.baseUrl], [null, 'https://api.groq.example/openai/v1']);
      assert.deepEqual(await access(a.organizationId, 'openai_compatible'), {
        apiKey: null, baseUrl: 'https://api.groq.example/openai/v1', source: 'organization', egressChecked: true, accountSid: null,
      });
      // Without a key there is nothing a new destination could be sent: moving needs none.
      assert.equal((await call('PUT', location, { body: { provider: 'openai_compatible', baseUrl: 'https://api.together.example/v1' } })).statusCode, 200);
      assert.equal((await call('PUT', location, { body: { provider: 'openai_compatible', baseUrl: 'https://api.together.example/v1', apiKey: key('together') } })).statusCode, 200);
      used.push(key('together'));
      assert.equal((await call('GET', location)).json().data.apiKey, '********');
      assert.equal((await access(a.organizationId, 'openai_compatible'))?.apiKey, key('together'));
      // With one, the usual rule: a move asks for the key again; null takes the key away.
      assert.equal((await call('PUT', location, { body: { provider: 'openai_compatible', baseUrl: 'https://elsewhere.example/v1' } })).statusCode, 400);
      assert.equal((await call('PUT', location, { body: { provider: 'openai_compatible', baseUrl: 'https://api.together.example/v1', apiKey: null } })).statusCode, 200);
      assert.equal((await access(a.organizationId, 'openai_compatible'))?.apiKey, null);
      const missing = await call('PUT', location, { body: { provider: 'openai_compatible', apiKey: null } });
      assert.deepEqual([missing.statusCode, missing.json().error.details[0].path], [400, 'baseUrl']);
      assert.equal((await call('DELETE', location)).statusCode, 200);
    });

    it('openai: a credential naming a server of its own (a self-hosted Whisper) takes no key; one for the public API needs one', async () => {
      const created = await create({ provider: 'openai', baseUrl: 'https://whisper.internal.example/v1' });
      assert.equal(created.statusCode, 201, created.body);
      const location = created.headers.location as string;
      assert.deepEqual(await access(a.organizationId, 'openai'), {
        apiKey: null, baseUrl: 'https://whisper.internal.example/v1', source: 'organization', egressChecked: true, accountSid: null,
      });
      // Dropping the baseUrl of a keyless credential would send no key to the public API.
      const dropped = await call('PUT', location, { body: { provider: 'openai', baseUrl: null } });
      assert.equal(dropped.statusCode, 400);
      assert.deepEqual(dropped.json().error.details.map((d: { path: string }) => d.path), ['apiKey']);
      assert.equal((await access(a.organizationId, 'openai'))?.baseUrl, 'https://whisper.internal.example/v1', 'unchanged');
      assert.equal((await call('DELETE', location)).statusCode, 200);
      const refused = await call('POST', url, { body: { provider: 'openai' } });
      assert.equal(refused.statusCode, 400);
      assert.deepEqual(refused.json().error.details, [{ path: 'apiKey', message: 'is required for openai unless baseUrl names a server of your own (a self-hosted server may take none)' }]);
    });

    it('resolves the organization\'s credential first, then the platform environment, else null', async () => {
      // Nothing stored: deepgram falls back to the platform key and base URL, cartesia and twilio to nothing.
      assert.deepEqual(await access(a.organizationId, 'deepgram'), {
        apiKey: PLATFORM.DEEPGRAM_API_KEY, baseUrl: PLATFORM.DEEPGRAM_BASE_URL, source: 'platform', egressChecked: false, accountSid: null,
      });
      // A platform base URL without a key reaches only openai (a local OpenAI-compatible server needs none).
      assert.deepEqual(await access(a.organizationId, 'openai'), { apiKey: null, baseUrl: PLATFORM.OPENAI_BASE_URL, source: 'platform', egressChecked: false, accountSid: null });
      assert.equal(await access(a.organizationId, 'elevenlabs'), null);
      assert.equal(await access(a.organizationId, 'cartesia'), null);
      assert.equal(await access(a.organizationId, 'twilio'), null);

      // The organization's key wins, and without its own baseUrl goes to the platform's (operator configuration).
      const own = await create({ provider: 'deepgram', apiKey: key('deepgram-own') });
      assert.deepEqual(await access(a.organizationId, 'deepgram'), {
        apiKey: key('deepgram-own'), baseUrl: PLATFORM.DEEPGRAM_BASE_URL, source: 'organization', egressChecked: false, accountSid: null,
      });
      const cartesia = await create({ provider: 'cartesia', apiKey: key('cartesia-own') });
      assert.deepEqual(await access(a.organizationId, 'cartesia'), { apiKey: key('cartesia-own'), baseUrl: null, source: 'organization', egressChecked: false, accountSid: null });

      // Another organization of the same vendor never gets this organization's keys.
      const orgB = (await t.call('POST', `/api/v1/vendors/${a.vendorId}/organizations`, { body: { name: 'B' } })).json().data.id;
      assert.equal((await access(orgB, 'deepgram'))?.apiKey, PLATFORM.DEEPGRAM_API_KEY);
      assert.equal(await access(orgB, 'cartesia'), null);
      for (const res of [own, cartesia]) assert.equal((await call('DELETE', res.headers.location as string)).statusCode, 200);
      assert.equal((await t.call('DELETE', `/api/v1/vendors/${a.vendorId}/organizations/${orgB}`)).statusCode, 200);
    });

    it('another organization\'s token gets 403; another organization\'s credential is a 404 on every route', async () => {
      const location = (await create({ provider: 'openai', apiKey: key('openai-a') })).headers.location as string;
      const id = location.split('/').at(-1);
      const other = await createTenant(t, 'Other');
      const otherToken = await createApiToken(t, other.vendorId, { role: 'admin', organizationId: other.organizationId });
      assert.equal((await call('GET', location, { token: otherToken })).statusCode, 403);
      assert.equal((await call('GET', url, { token: otherToken })).statusCode, 403);
      const foreign = `${other.orgPath}/provider-credentials/${id}`;
      assert.equal((await call('GET', foreign, { token: otherToken })).statusCode, 404);
      assert.equal((await call('PUT', foreign, { token: otherToken, body: { provider: 'openai', apiKey: 'mine' } })).statusCode, 404);
      assert.equal((await call('DELETE', foreign, { token: otherToken })).statusCode, 404);
      assert.equal((await call('GET', `${other.orgPath}/provider-credentials`, { token: otherToken })).json().totalElements, 0);
      assert.equal((await access(other.organizationId, 'openai'))?.source, 'platform', 'the other organization gets the platform\'s, never A\'s');
      assert.equal((await access(a.organizationId, 'openai'))?.apiKey, key('openai-a'), 'untouched');
      assert.equal((await call('DELETE', location)).statusCode, 200);
    });

    it('providers:read reads, providers:write writes: viewer reads, editor writes, sip:* does neither', async () => {
      const location = (await create({ provider: 'elevenlabs', apiKey: key('eleven-perm') })).headers.location as string;
      const viewer = await createApiToken(t, a.vendorId, { role: 'viewer', organizationId: a.organizationId });
      const editor = await createApiToken(t, a.vendorId, { role: 'editor', organizationId: a.organizationId });
      const sipOnly = await createApiToken(t, a.vendorId, { permissions: ['sip:read', 'sip:write'], organizationId: a.organizationId });
      assert.equal((await call('GET', location, { token: viewer })).statusCode, 200);
      assert.equal((await call('GET', url, { token: viewer })).statusCode, 200);
      assert.equal((await call('PUT', location, { token: viewer, body: { provider: 'elevenlabs' } })).statusCode, 403);
      assert.equal((await call('DELETE', location, { token: viewer })).statusCode, 403);
      assert.equal((await call('GET', location, { token: sipOnly })).statusCode, 403);
      assert.equal((await call('PUT', location, { token: editor, body: { provider: 'elevenlabs' } })).statusCode, 200);
      assert.equal((await call('DELETE', location, { token: editor })).statusCode, 200);
    });

    it('Idempotency-Key replays the create; an organization with provider credentials cannot be deleted', async () => {
      const org = await t.call('POST', `/api/v1/vendors/${a.vendorId}/organizations`, { body: { name: 'Short-lived' } });
      const orgPath = `/api/v1/vendors/${a.vendorId}/organizations/${org.json().data.id}`;
      const body = { provider: 'deepgram', apiKey: key('deepgram-idem') };
      used.push(body.apiKey);
      const headers = { 'idempotency-key': 'provider-once' };
      const first = await call('POST', `${orgPath}/provider-credentials`, { body, headers });
      const again = await call('POST', `${orgPath}/provider-credentials`, { body, headers });
      assert.deepEqual([first.statusCode, again.statusCode, again.headers['idempotent-replayed']], [201, 201, 'true']);
      assert.equal(again.body, first.body);
      const blocked = await t.call('DELETE', orgPath);
      assert.equal(blocked.statusCode, 409);
      assert.match(blocked.json().message, /provider credentials/);
      assert.equal((await call('DELETE', first.headers.location as string)).statusCode, 200);
      assert.equal((await t.call('DELETE', orgPath)).statusCode, 200);
    });
  });
}
