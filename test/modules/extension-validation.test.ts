import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { hook, toolSchema, toolWebhook } from '../helpers/fixtures.ts';

const P = 'extensions[1].parameters';

/** Each case: what to change in the second extension, and the field the 400 must name. */
const CASES: [string, Record<string, unknown>, string][] = [
  ['bad tool name', { name: 'has spaces', schema: toolSchema('has spaces') }, `${P}.name`],
  ['tool name too long', { name: 'x'.repeat(65), schema: toolSchema('x'.repeat(65)) }, `${P}.name`],
  ['duplicate tool name', { name: 'first', schema: toolSchema('first') }, `${P}.name`],
  ['missing serverUrl', { serverUrl: undefined }, `${P}.serverUrl`],
  ['ftp serverUrl', { serverUrl: 'ftp://tools.example.com/x' }, `${P}.serverUrl`],
  ['not a URL', { serverUrl: 'tools dot example' }, `${P}.serverUrl`],
  ['credentials in the URL', { serverUrl: 'https://user:pw@tools.example.com/' }, `${P}.serverUrl`],
  ['loopback literal', { serverUrl: 'http://127.0.0.1:9000/hook' }, `${P}.serverUrl`],
  ['metadata literal in hex', { serverUrl: 'http://0xa9.254.169.254/latest' }, `${P}.serverUrl`],
  ['missing schema', { schema: undefined }, `${P}.schema`],
  ['schema not JSON', { schema: '{name: second' }, `${P}.schema`],
  ['schema not a string', { schema: { name: 'second' } }, `${P}.schema`],
  ['schema name differs', { schema: toolSchema('another') }, `${P}.schema`],
  ['schema parameters not an object type', { schema: JSON.stringify({ name: 'second', parameters: { type: 'array' } }) }, `${P}.schema`],
  ['unsupported property type', { schema: JSON.stringify({ name: 'second', parameters: { type: 'object', properties: { when: { type: 'date' } } } }) }, `${P}.schema`],
  ['required names a missing property', { schema: JSON.stringify({ name: 'second', parameters: { type: 'object', properties: {}, required: ['ghost'] } }) }, `${P}.schema`],
  ['header value not a string', { headers: { 'X-Key': 42 } }, `${P}.headers.X-Key`],
  ['header value with a line break', { headers: { 'X-Key': 'a\r\nInjected: yes' } }, `${P}.headers.X-Key`],
  ['reserved header', { headers: { Host: 'evil.example.com' } }, `${P}.headers.Host`],
  ['invalid header name', { headers: { 'Bad Header': 'x' } }, `${P}.headers.Bad Header`],
  ['timeout too long', { timeoutSeconds: 61 }, `${P}.timeoutSeconds`],
  ['timeout zero', { timeoutSeconds: 0 }, `${P}.timeoutSeconds`],
  ['unknown key', { retries: 3 }, `${P}.retries`],
  ['masked header on a new extension', { headers: { Authorization: '********' } }, `${P}.headers.Authorization`],
];

for (const dialect of DIALECTS) {
  describe(`tool_webhook and hook validation (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    let url: string;
    before(async () => {
      t = await buildTestApp(dialect);
      a = await createTenant(t);
      url = `${a.orgPath}/assistants`;
    });
    after(() => t.close());

    for (const [label, change, path] of CASES) {
      it(`400 for ${label}, naming ${path}`, async () => {
        const second = toolWebhook('second');
        const parameters: Record<string, unknown> = { ...second.parameters, ...change };
        for (const key of Object.keys(parameters)) if (parameters[key] === undefined) delete parameters[key];
        const res = await t.call('POST', url, { body: { name: 'x', extensions: [toolWebhook('first'), { type: 'tool_webhook', parameters }] } });
        assert.equal(res.statusCode, 400, res.body);
        const details = res.json().error.details as { path: string; message: string }[];
        assert.ok(details.some((d) => d.path === path), `${path} not in ${JSON.stringify(details)}`);
        assert.ok(details.every((d) => d.message.length > 5));
      });
    }

    it('an unknown extension type is a 400 that lists the known ones, and a known one is checked by its own schema', async () => {
      const typo = await t.call('POST', url, { body: { name: 'x', extensions: [{ type: 'tool_webhok', parameters: {} }] } });
      assert.equal(typo.statusCode, 400);
      const detail = typo.json().error.details.find((d: { path: string }) => d.path === 'extensions[0].type');
      assert.ok(detail, typo.body);
      for (const known of ['tool_webhook', 'end_call', 'transfer_call', 'send_dtmf']) assert.match(detail.message, new RegExp(known));
      assert.equal(typo.json().error.details.length, 1, 'only the unknown type is reported, not every schema it does not match');
      const transfer = await t.call('POST', url, { body: { name: 'x', extensions: [{ type: 'transfer_call', parameters: { destination: 'nowhere' } }] } });
      assert.equal(transfer.statusCode, 400);
      assert.ok(transfer.json().error.details.some((d: { path: string }) => d.path === 'extensions[0].parameters.destination'), transfer.body);
      const ok = await t.call('POST', url, { body: { name: 'Call control', extensions: [
        { type: 'end_call', parameters: { message: 'Goodbye!' } },
        { type: 'transfer_call', parameters: { destination: 'sip:desk@pbx.example.com', message: 'Transferring you now.' } },
        { type: 'send_dtmf', parameters: {} },
      ] } });
      assert.equal(ok.statusCode, 201, ok.body);
      assert.deepEqual(ok.json().data.extensions.map((e: { name: string }) => e.name), ['end_call', 'transfer_call', 'send_dtmf']);
      const twice = await t.call('POST', url, { body: { name: 'x', extensions: [{ type: 'end_call', parameters: {} }, { type: 'end_call', parameters: {} }] } });
      assert.equal(twice.statusCode, 400);
      assert.ok(twice.json().error.details.some((d: { path: string }) => d.path === 'extensions[1].type'), twice.body);
    });

    it('a nested mistake inside the tool specification is found (the JSON Schema is meta-validated)', async () => {
      const schema = JSON.stringify({ name: 'second', parameters: { type: 'object', properties: { tags: { type: 'array', items: 'oops' } } } });
      const res = await t.call('POST', url, { body: { name: 'x', extensions: [toolWebhook('second', { schema })] } });
      assert.equal(res.statusCode, 400);
      assert.ok(res.json().error.details.some((d: { path: string; message: string }) => d.path === 'extensions[0].parameters.schema' && /items/.test(d.message)), res.body);
    });

    it('hooks: unknown type, bad URL, missing secret and masked secret on a new hook are 400s', async () => {
      const cases: [unknown, string][] = [
        [{ type: 'call_exploded', parameters: { url: 'https://h.example.com', secret: 's' } }, 'callEventHooks[0].type'],
        [{ type: 'call_ended', parameters: { url: 'not a url', secret: 's' } }, 'callEventHooks[0].parameters.url'],
        [{ type: 'call_ended', parameters: { url: 'https://h.example.com' } }, 'callEventHooks[0].parameters.secret'],
        [{ type: 'call_ended', parameters: { url: 'https://h.example.com', secret: '********' } }, 'callEventHooks[0].parameters.secret'],
        [{ type: 'call_ended', parameters: { url: 'https://h.example.com', secret: 's', extra: 'x' } }, 'callEventHooks[0].parameters.extra'],
      ];
      for (const [item, path] of cases) {
        const res = await t.call('POST', url, { body: { name: 'x', callEventHooks: [item] } });
        assert.equal(res.statusCode, 400, JSON.stringify(item));
        assert.ok(res.json().error.details.some((d: { path: string }) => d.path === path), `${path}: ${res.body}`);
      }
    });

    it('nothing was created by any rejected request', async () => {
      const list = await t.call('GET', url);
      assert.equal(list.json().totalElements, 1, 'only the call-control assistant');
    });

    it('no secret is stored in plain text: header values and hook secrets are sealed', async () => {
      const headerValue = 'Bearer tool-secret-4f1b7c';
      const hookSecret = 'hook-secret-9d2e55';
      const signing = 'signing-secret-771aa0';
      const res = await t.call('POST', `${a.orgPath}/agents`, {
        body: {
          name: 'Secretive',
          extensions: [toolWebhook('lookup', { headers: { Authorization: headerValue, 'X-Api-Key': 'key-0b9e3a' }, signingSecret: signing })],
          callEventHooks: [hook('call_ended', hookSecret)],
        },
      });
      assert.equal(res.statusCode, 201);
      assert.ok(!res.body.includes(headerValue) && !res.body.includes(hookSecret) && !res.body.includes(signing));
      const { rows } = await sql<Record<string, unknown>>`select * from assistants`.execute(t.db.kysely);
      const dump = JSON.stringify(rows);
      for (const secret of [headerValue, 'tool-secret-4f1b7c', 'key-0b9e3a', hookSecret, signing]) {
        assert.ok(!dump.includes(secret), `${secret} stored in plain text`);
      }
      assert.match(dump, /enc:v1:/);
    });
  });
}
