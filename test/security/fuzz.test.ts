import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { sql } from 'kysely';
import { DIALECTS } from '../helpers/dialects.ts';
import { ADMIN_TOKEN, buildTestApp, createTenant, type TestApp } from '../helpers/app.ts';
import { strategyBody } from '../helpers/fixtures.ts';
import { mutate, valid, type Schema } from './schema-arbitrary.ts';

/**
 * Property-based fuzzing driven by the served OpenAPI document: for every documented route,
 * requests that are valid, almost valid and hostile. Properties: never a 5xx; every response
 * matches the schema documented for its status; a 4xx changes nothing in the database.
 * Reproduce a failure with FUZZ_SEED=<seed printed by fast-check>.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 5000);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
// Routes that would reach out of the machine (a SIP REGISTER to a generated host, a tool webhook
// test to a configured URL) or upgrade to WebSocket.
const SKIP = [/\/validate$/, /\/ws$/, /\/extensions\/\{extensionId\}\/test$/, /\/assistant-tests\//];
const STATE_TABLES_EXCLUDED = new Set(['counters', 'rate_limit_windows', 'idempotency_keys', 'parley_migrations', 'settings']);
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

interface Operation {
  method: string;
  path: string;
  params: Schema[];
  body: Schema | undefined;
  responses: Record<string, Schema | undefined>;
}

function inlineRefs(node: unknown, components: Record<string, Schema>): unknown {
  if (Array.isArray(node)) return node.map((n) => inlineRefs(n, components));
  if (!node || typeof node !== 'object') return node;
  const obj = node as Schema;
  if (typeof obj.$ref === 'string') return inlineRefs(components[obj.$ref.split('/').pop() as string], components);
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, inlineRefs(v, components)]));
}

for (const dialect of DIALECTS) {
  describe(`fuzzing every route from /openapi.json (${dialect})`, () => {
    let t: TestApp;
    let operations: Operation[];
    let known: Record<string, string[]>;
    let signature: () => Promise<string>;
    const ajv = new Ajv2020({ strict: false, allErrors: false });
    addFormats(ajv);
    ajv.addKeyword('example');

    before(async () => {
      t = await buildTestApp(dialect, { PARLEY_RATE_LIMIT_PER_MINUTE: '0' });
      const a = await createTenant(t);
      const strategy = (await t.call('POST', `${a.orgPath}/llm-generation-strategies`, { body: strategyBody })).json().data.id;
      const assistant = (await t.call('POST', `${a.orgPath}/assistants`, { body: { name: 'Fuzz' } })).json().data.id;
      const agent = (await t.call('POST', `${a.orgPath}/agents`, { body: { name: 'Fuzz agent' } })).json().data.id;
      known = { vendorId: [a.vendorId], organizationId: [a.organizationId], ids: [strategy, assistant, agent, a.organizationId], agentId: [agent], assistantId: [assistant], strategyId: [strategy], version: ['1', '2'] };
      const doc = (await t.call('GET', '/openapi.json', { token: null })).json();
      const components = doc.components.schemas as Record<string, Schema>;
      operations = [];
      for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Schema>>)) {
        if (SKIP.some((re) => re.test(path))) continue;
        for (const [method, op] of Object.entries(item)) {
          const responses: Record<string, Schema | undefined> = {};
          for (const [status, r] of Object.entries((op.responses ?? {}) as Record<string, Schema>)) {
            responses[status] = inlineRefs(r.content?.['application/json']?.schema, components) as Schema | undefined;
          }
          operations.push({ method: method.toUpperCase(), path, params: (op.parameters ?? []) as Schema[], body: op.requestBody?.content?.['application/json']?.schema as Schema | undefined, responses });
        }
      }
      const tables = t.db.dialect === 'sqlite'
        ? (await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(t.db.kysely)).rows
        : (await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = 'public'`.execute(t.db.kysely)).rows;
      const parts = tables.map((r) => r.name).filter((n) => !STATE_TABLES_EXCLUDED.has(n)).sort();
      // One query: each table's row count and (where it has one) latest updated_at.
      const columns = await Promise.all(parts.map(async (name) => {
        const { rows } = t.db.dialect === 'sqlite'
          ? await sql<{ name: string }>`select name from pragma_table_info(${name})`.execute(t.db.kysely)
          : await sql<{ name: string }>`select column_name as name from information_schema.columns where table_name = ${name}`.execute(t.db.kysely);
        return rows.some((r) => r.name === 'updated_at') ? sql`(select count(*) || '/' || coalesce(max(updated_at)::text, '') from ${sql.table(name)})`
          : sql`(select count(*) || '' from ${sql.table(name)})`;
      }));
      const query = sql<{ s: string }>`select ${sql.join(columns, sql` || ' ' || `)} as s`;
      signature = async () => (await query.execute(t.db.kysely)).rows[0]?.s ?? '';
      if (t.db.dialect === 'sqlite') {
        const sqliteQuery = sql<{ s: string }>`select ${sql.join(columns.map((c) => sql.raw(c.compile(t.db.kysely).sql.replace('::text', ''))), sql` || ' ' || `)} as s`;
        signature = async () => (await sqliteQuery.execute(t.db.kysely)).rows[0]?.s ?? '';
      }
    });
    after(() => t.close());

    it(`${RUNS} generated requests: no 5xx, responses as documented, nothing changed by a 4xx`, { timeout: 600_000 }, async () => {
      const statuses = new Map<number, number>();
      const request = fc.integer({ min: 0, max: operations.length - 1 }).chain((index) => {
        const op = operations[index] as Operation;
        const pathArbs = op.params.filter((p) => p.in === 'path').map((p) =>
          fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...(known[p.name as string] ?? known.ids ?? [])) }, { weight: 1, arbitrary: fc.oneof(fc.uuid(), fc.constantFrom('not-a-uuid', '..%2F', '0'.repeat(300), '%00')) })
            .map((v) => [p.name as string, v] as const));
        const queryArbs = op.params.filter((p) => p.in === 'query').map((p) =>
          fc.option(fc.oneof({ weight: 3, arbitrary: valid(p.schema as Schema, known) }, { weight: 1, arbitrary: valid(p.schema as Schema, known).chain(mutate) }), { nil: undefined })
            .map((v) => [p.name as string, v] as const));
        const body = op.body
          ? fc.oneof(
              { weight: 3, arbitrary: valid(op.body, known).map((v) => JSON.stringify(v)) },
              { weight: 3, arbitrary: valid(op.body, known).chain(mutate).map((v) => JSON.stringify(v) ?? 'null') },
              { weight: 1, arbitrary: fc.constantFrom('{"name":"a","name":1}', '{"name":', '[]', '"x"', '{"__proto__":{"admin":true},"name":"x"}', '{"name":"x"}'.padEnd(2_000_000, ' ')) },
            )
          : fc.constant(undefined);
        return fc.tuple(fc.constant(index), fc.tuple(...pathArbs), fc.tuple(...queryArbs), body);
      });

      await fc.assert(
        fc.asyncProperty(request, async ([index, pathValues, queryValues, body]) => {
          const op = operations[index] as Operation;
          let url = op.path;
          for (const [name, value] of pathValues) url = url.replace(`{${name}}`, encodeURIComponent(String(value)));
          const query = new URLSearchParams();
          for (const [name, value] of queryValues) {
            if (value === undefined) continue;
            for (const v of [value].flat()) query.append(name, typeof v === 'string' ? v : JSON.stringify(v));
          }
          if (query.size) url += `?${query.toString()}`;
          const before = await signature();
          const res = await t.app.inject({
            method: op.method as 'GET',
            url,
            headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
            ...(body !== undefined ? { payload: body } : {}),
          });
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          assert.ok(res.statusCode < 500, `${op.method} ${url} -> ${res.statusCode}: ${res.body.slice(0, 300)}`);
          const schema = op.responses[String(res.statusCode)];
          assert.ok(schema, `${op.method} ${op.path} answered ${res.statusCode}, which is not documented`);
          const validate = ajv.compile(schema);
          assert.ok(validate(res.json()), `${op.method} ${url} -> ${res.statusCode} does not match its schema: ${ajv.errorsText(validate.errors)}`);
          if (res.statusCode >= 400) assert.equal(await signature(), before, `${op.method} ${url} -> ${res.statusCode} changed the database`);
        }),
        { numRuns: RUNS, ...(SEED !== undefined ? { seed: SEED } : {}), endOnFailure: true },
      );
      const summary = [...statuses.entries()].sort(([x], [y]) => x - y).map(([s, n]) => `${s}:${n}`).join(' ');
      assert.ok((statuses.get(200) ?? 0) + (statuses.get(201) ?? 0) > RUNS / 20, `too few successes to mean much: ${summary}`);
      assert.ok((statuses.get(400) ?? 0) > RUNS / 20, `too few rejections: ${summary}`);
    });
  });
}
