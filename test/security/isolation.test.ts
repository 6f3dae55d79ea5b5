import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RouteOptions } from 'fastify';
import { sql } from 'kysely';
import type { AuthRule } from '../../src/http/auth.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { enqueueEvent } from '../../src/modules/events/outbox.ts';
import { buildTestApp, createApiToken, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';

/** Routes anyone may call; a new public route must be added here on purpose. */
// Public to the API token check; the Twilio webhook is authenticated by X-Twilio-Signature and the
// media stream by its single-use token (test/calls/twilio.test.ts tries both).
const PUBLIC = [
  /^\/$/, /^\/healthz$/, /^\/readyz$/, /^\/metrics$/, /^\/openapi\.json$/, /^\/asyncapi\.json$/, /^\/docs/, /^\/console/,
  /^\/api\/v1\/calls\/:callId\/ws$/, /^\/api\/v1\/calls\/:callId\/media-stream\/:token$/,
  /^\/api\/v1\/vendors\/:vendorId\/organizations\/:organizationId\/twilio\/voice$/,
];
const SOME_ID = '5f0c7d1e-3b2a-4c4d-9e8f-0a1b2c3d4e5f';

interface Route {
  method: string;
  url: string;
  rule: AuthRule | undefined;
  /** A list: it takes page and size. */
  paged: boolean;
}

function pathFor(url: string, ids: { vendorId: string; organizationId: string }): string {
  return url.replace(/:(\w+)/g, (_, name: string) => (name === 'vendorId' ? ids.vendorId : name === 'organizationId' ? ids.organizationId : SOME_ID));
}

/** Row counts of every table: a refused request must leave all of them as they were. */
async function snapshot(t: TestApp): Promise<string> {
  const tables = t.db.dialect === 'sqlite'
    ? (await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(t.db.kysely)).rows
    : (await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = 'public'`.execute(t.db.kysely)).rows;
  const counts: string[] = [];
  for (const { name } of tables.sort((x, y) => x.name.localeCompare(y.name))) {
    if (name === 'counters') continue; // the auth epoch and list totals are not tenant data
    const { rows } = await sql<{ n: number }>`select count(*) as n from ${sql.table(name)}`.execute(t.db.kysely);
    counts.push(`${name}=${Number(rows[0]?.n)}`);
  }
  return counts.join(' ');
}

for (const dialect of DIALECTS) {
  describe(`tenant isolation matrix, generated from the route table (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    const routes: Route[] = [];
    const tokens: Record<string, string> = {};

    before(async () => {
      const seen = (route: RouteOptions) => {
        for (const method of [route.method].flat()) {
          if (method === 'HEAD') continue;
          const query = route.schema?.querystring as { properties?: Record<string, unknown> } | undefined;
          routes.push({ method, url: route.url, rule: (route.config)?.auth, paged: Boolean(query?.properties?.page) });
        }
      };
      // The matrix sends hundreds of 401s from one address on purpose; the flood guard
      // (test/security/floods.test.ts) would answer 429 once the route count passes its budget.
      t = await buildTestApp(dialect, { PARLEY_FAILED_REQUESTS_PER_MINUTE: '0' }, { onRoute: seen });
      a = await createTenant(t, 'A');
      const orgB = (await t.call('POST', `/api/v1/vendors/${a.vendorId}/organizations`, { body: { name: 'B' } })).json().data.id;
      const other = await createTenant(t, 'Other vendor');
      tokens.otherOrganization = await createApiToken(t, a.vendorId, { role: 'admin', organizationId: orgB });
      tokens.otherVendor = await createApiToken(t, other.vendorId, { role: 'admin' });
      tokens.viewer = await createApiToken(t, a.vendorId, { role: 'viewer', organizationId: a.organizationId });
      const revoked = await t.call('POST', `/api/v1/vendors/${a.vendorId}/api-tokens`, { body: { name: 'r', role: 'admin' } });
      tokens.revoked = revoked.json().data.token;
      await t.call('DELETE', revoked.headers.location as string);
      const expired = await t.call('POST', `/api/v1/vendors/${a.vendorId}/api-tokens`, { body: { name: 'e', role: 'admin', expiresAt: new Date(Date.now() + 60_000).toISOString() } });
      tokens.expired = expired.json().data.token;
      await t.db.kysely.updateTable('api_tokens').set({ expires_at: '2000-01-01T00:00:00.000Z' }).where('id', '=', expired.json().data.id).execute();
      await t.db.kysely.updateTable('counters').set({ value: sql`value + 1` }).where('key', '=', 'auth_epoch').execute();
      tokens.none = '';
      tokens.garbage = 'prl_aaaaaaaaaaaa_' + 'b'.repeat(43);
    });
    after(() => t.close());

    /** The status the contract gives this token on this route, or null where it is not decided by auth alone. */
    function expected(route: Route, kind: string): number | null {
      if (['none', 'revoked', 'expired', 'garbage'].includes(kind)) return 401;
      const rule = route.rule;
      if (!rule || rule.scope === 'public') return null;
      if (rule.scope === 'admin') return 403;
      if (rule.scope === 'token') return null; // any valid token: about the caller itself (checked below)
      if (kind === 'otherVendor') return 403;
      if (kind === 'otherOrganization') return rule.scope === 'organization' ? 403 : null;
      if (kind === 'viewer') return rule.permission.endsWith(':write') ? 403 : null;
      return null;
    }

    it('every API route declares an access rule, and only the known routes are public', () => {
      assert.ok(routes.length > 40, `only ${routes.length} routes seen`);
      for (const route of routes) {
        const isPublic = PUBLIC.some((re) => re.test(route.url));
        if (isPublic) continue;
        assert.ok(route.rule, `${route.method} ${route.url} has no auth rule`);
        assert.notEqual(route.rule.scope, 'public', `${route.method} ${route.url} is public but not on the list`);
      }
    });

    it('each token kind gets the contract status on every route, and nothing changes', async () => {
      const before = await snapshot(t);
      let checked = 0;
      for (const route of routes) {
        if (PUBLIC.some((re) => re.test(route.url))) continue;
        const url = pathFor(route.url, a);
        for (const [kind, token] of Object.entries(tokens)) {
          const want = expected(route, kind);
          if (want === null) continue;
          const res = await t.app.inject({
            method: route.method as 'GET',
            url,
            headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/json' },
            payload: route.method === 'GET' || route.method === 'DELETE' ? undefined : '{}',
          });
          assert.equal(res.statusCode, want, `${kind} ${route.method} ${route.url}: ${res.body}`);
          assert.equal(res.json().success, false);
          checked++;
        }
      }
      assert.ok(checked > 200, `only ${checked} cases`);
      assert.equal(await snapshot(t), before, 'a refused request changed the database');
    });

    it('token routes name no tenant in their path and answer every valid token, whatever its scope', async () => {
      const own = routes.filter((r) => r.rule?.scope === 'token');
      assert.ok(own.some((r) => r.url === '/api/v1/me'), 'GET /api/v1/me is a token route');
      for (const route of own) {
        assert.doesNotMatch(route.url, /:(vendorId|organizationId)\b/, `${route.url}: a tenant route needs a tenant scope`);
        if (route.method !== 'GET') continue;
        for (const kind of ['otherOrganization', 'otherVendor', 'viewer']) {
          const res = await t.call('GET', route.url, { token: tokens[kind] ?? null });
          assert.equal(res.statusCode, 200, `${kind} GET ${route.url}: ${res.body}`);
        }
      }
    });

    it('lists never show another organization\'s rows', async () => {
      // Something of every kind in organization A...
      const assistant = (await t.call('POST', `${a.orgPath}/assistants`, { body: { name: 'A assistant' } })).json().data.id;
      const agent = (await t.call('POST', `${a.orgPath}/agents`, { body: { name: 'A agent' } })).json().data.id;
      await t.call('POST', `${a.orgPath}/agents/${agent}/tasks`, { body: { targetNumber: '+4930123456' } });
      await t.call('POST', `${a.orgPath}/llm-generation-strategies`, { body: { name: 'A', type: 'text_to_speech', parameters: {} } });
      const credential = (await t.call('POST', `${a.orgPath}/sip/credentials`, { body: { name: 'A', hostname: 'sip.example.com', username: 'u', password: 'p', maxAgentTasks: 1 } })).json().data.id;
      await t.call('POST', `${a.orgPath}/sip/numbers`, { body: { number: '+4930999000', sipCredentialId: credential } });
      await t.call('POST', `${a.orgPath}/provider-credentials`, { body: { provider: 'deepgram', apiKey: 'organization A key' } });
      await t.call('POST', `${a.orgPath}/assistants/${assistant}/calls`, { body: {} });
      const hooked = await t.call('POST', `${a.orgPath}/assistants`, { body: { name: 'Hooked', callEventHooks: [{ type: 'call_ended', parameters: { url: 'https://hooks.example.com/x', secret: 's' } }] } });
      await t.db.kysely.transaction().execute((trx) => enqueueEvent(trx, { organizationId: a.organizationId, sourceKind: 'assistant', sourceId: hooked.json().data.id, type: 'call_ended', payload: {} }, new Date()));
      // ...every org-scoped list shows it to A's admin, and shows nothing to organization B's admin on B.
      const orgB = (await t.call('GET', `/api/v1/vendors/${a.vendorId}/organizations?size=100`)).json().data.find((o: { name: string }) => o.name === 'B').id;
      const lists = routes.filter((r) => r.method === 'GET' && r.paged && r.rule?.scope === 'organization' && !/:(\w+)Id\//.test(r.url.replace(':vendorId/', '').replace(':organizationId/', '')));
      assert.ok(lists.length >= 7, `${lists.length} lists`);
      for (const route of lists) {
        const own = await t.call('GET', pathFor(route.url, a));
        assert.equal(own.statusCode, 200, `${route.url}: ${own.body}`);
        assert.ok(own.json().totalElements >= 1, `${route.url} shows A its own rows`);
        const res = await t.app.inject({ method: 'GET', url: pathFor(route.url, { vendorId: a.vendorId, organizationId: orgB }), headers: { authorization: `Bearer ${tokens.otherOrganization}` } });
        assert.equal(res.statusCode, 200, `${route.url}: ${res.body}`);
        assert.deepEqual([res.json().data, res.json().totalElements], [[], 0], route.url);
      }
    });
  });
}
