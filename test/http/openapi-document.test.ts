import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createTenant, type TestApp } from '../helpers/app.ts';

const run = promisify(execFile);
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
type Json = Record<string, any>;

function operations(doc: Json): { method: string; path: string; op: Json }[] {
  return Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ method, path, op: item[method] as Json })));
}

const ORG = '/api/v1/vendors/{vendorId}/organizations/{organizationId}';

for (const dialect of DIALECTS) {
  describe(`the OpenAPI document is made for client generators (${dialect})`, () => {
    let t: TestApp;
    let doc: Json;
    before(async () => {
      t = await buildTestApp(dialect);
      doc = (await t.call('GET', '/openapi.json', { token: null, headers: { host: 'parley.test:8080' } })).json();
    });
    after(() => t.close());

    it('every operation has a unique operationId in lowerCamelCase, under 40 characters', () => {
      const seen = new Map<string, string>();
      for (const { method, path, op } of operations(doc)) {
        const where = `${method.toUpperCase()} ${path}`;
        assert.equal(typeof op.operationId, 'string', `${where} has no operationId`);
        assert.match(op.operationId, /^[a-z][A-Za-z0-9]+$/, where);
        assert.ok(op.operationId.length <= 40, `${where}: ${op.operationId} is longer than 40 characters`);
        assert.ok(!seen.has(op.operationId), `${op.operationId} names both ${seen.get(op.operationId)} and ${where}`);
        seen.set(op.operationId, where);
      }
      // The names the conventions give (docs/api-conventions.md), spot-checked.
      const id = (method: string, path: string) => doc.paths[path][method].operationId;
      assert.equal(id('put', `${ORG}/assistants/{assistantId}`), 'updateAssistant');
      assert.equal(id('patch', `${ORG}/agents/{agentId}`), 'patchAgent');
      assert.equal(id('get', `${ORG}/assistants`), 'listAssistants');
      assert.equal(id('post', `${ORG}/agents/{agentId}/tasks`), 'createAgentTask');
      assert.equal(id('post', `${ORG}/agents/{agentId}/tasks/{taskId}/execute`), 'executeAgentTask');
      assert.equal(id('post', `${ORG}/llm-generation-strategies`), 'createLlmGenerationStrategy');
      assert.equal(id('post', `${ORG}/sip/credentials/validate`), 'validateSipCredentials');
      assert.equal(id('post', `${ORG}/sip/credentials/{sipCredentialId}/validate`), 'validateSipCredential');
      assert.equal(id('post', `${ORG}/assistants/{assistantId}/calls`), 'startAssistantCall');
    });

    it('every request and response body is a named component', () => {
      for (const { method, path, op } of operations(doc)) {
        const bodies = [['request', op.requestBody], ...Object.entries(op.responses ?? {})];
        for (const [what, holder] of bodies) {
          for (const [type, media] of Object.entries((holder as Json | undefined)?.content ?? {})) {
            const ref = (media as Json).schema?.$ref as string | undefined;
            assert.match(ref ?? '', /^#\/components\/schemas\/[A-Z][A-Za-z0-9]+$/, `${method.toUpperCase()} ${path}: ${what} ${type} is inline`);
            assert.ok(doc.components.schemas[ref!.split('/').pop()!], ref);
          }
        }
      }
      const body = (method: string, path: string, status?: string) => {
        const op = doc.paths[path][method];
        return (status ? op.responses[status] : op.requestBody).content['application/json'].schema.$ref.split('/').pop();
      };
      assert.equal(body('post', `${ORG}/assistants`), 'AssistantCreate');
      assert.equal(body('post', `${ORG}/assistants`, '201'), 'AssistantEnvelope');
      assert.equal(body('put', `${ORG}/assistants/{assistantId}`), 'AssistantUpdate');
      assert.equal(body('get', `${ORG}/assistants`, '200'), 'AssistantPage');
      assert.equal(body('get', `${ORG}/agents/{agentId}`, '200'), 'AgentEnvelope');
      assert.equal(body('get', `${ORG}/agents/{agentId}`, '404'), 'ErrorEnvelope');
    });

    it('extensions and call event hooks are the same discriminated unions on read and on write', () => {
      const schemas = doc.components.schemas as Record<string, Json>;
      const name = (ref: string) => ref.split('/').pop()!;
      const union = (title: string) => {
        const schema = schemas[title]!;
        assert.equal(schema.discriminator?.propertyName, 'type', title);
        const byType = new Map<string, Json>();
        for (const [value, ref] of Object.entries(schema.discriminator.mapping as Record<string, string>)) byType.set(value, schemas[name(ref)]!);
        assert.deepEqual(schema.oneOf.map((b: Json) => b.$ref).sort(), [...Object.values(schema.discriminator.mapping)].sort());
        return byType;
      };
      for (const [read, write] of [['LlmExtension', 'AssistantUpdateLlmExtension'], ['CallEventHook', 'AssistantUpdateCallEventHook']] as const) {
        const reads = union(read);
        const writes = union(write);
        assert.deepEqual([...reads.keys()].sort(), [...writes.keys()].sort(), `${read} and ${write} know the same types`);
        for (const [type, branch] of reads) {
          assert.deepEqual(branch.properties.type.enum ?? [branch.properties.type.const], [type]);
          assert.deepEqual(branch.properties.parameters, writes.get(type)!.properties.parameters, `${type}: the same parameters on read and write`);
          assert.match(branch.properties.parameters.$ref, /^#\/components\/schemas\//);
        }
      }
      assert.equal(name(schemas.Assistant!.properties.extensions.items.$ref), 'LlmExtension');
      assert.equal(name(schemas.AssistantUpdate!.properties.extensions.items.$ref), 'AssistantUpdateLlmExtension');
      assert.equal(name(schemas.Agent!.properties.callEventHooks.items.$ref), 'CallEventHook');
    });

    it('a stored item no branch of the union matches is still read (the union is documented, not enforced on output)', async () => {
      const tenant = await createTenant(t);
      const id = crypto.randomUUID();
      const at = new Date().toISOString();
      await t.db.kysely.insertInto('assistants').values({
        id, organization_id: tenant.organizationId, kind: 'assistant', name: 'Written long ago', system_prompt: null, system_prompt_greeting: null,
        strategy_id: null, telephone_number_id: null, version: 1, created_at: at, updated_at: at, call_event_hooks: '[]',
        extensions: JSON.stringify([{ id: crypto.randomUUID(), name: 'lookup', type: 'retired_type', parameters: { a: 1 } }]),
      }).execute();
      const res = await t.call('GET', `${tenant.orgPath}/assistants/${id}`);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json().data.extensions.map((e: Json) => [e.type, e.parameters]), [['retired_type', { a: 1 }]]);
    });

    it('sort is a string with its pattern; creates document Idempotency-Key; servers names the request origin', () => {
      const list = doc.paths[`${ORG}/assistants`].get.parameters as Json[];
      const sort = list.find((p) => p.name === 'sort')!;
      assert.equal(sort.schema.type, 'string');
      assert.equal(sort.schema.default, 'name,asc');
      assert.ok(new RegExp(sort.schema.pattern).test('name,desc'));
      assert.ok(!new RegExp(sort.schema.pattern).test('password,asc'));
      for (const { method, path, op } of operations(doc)) {
        if (!/^create[A-Z]/.test(op.operationId) && !/^start[A-Z]/.test(op.operationId)) continue;
        const header = (op.parameters as Json[] | undefined)?.find((p) => p.in === 'header' && p.name === 'Idempotency-Key');
        assert.ok(header && !header.required, `${method.toUpperCase()} ${path} documents Idempotency-Key`);
      }
      assert.deepEqual(doc.servers.map((s: Json) => s.url), ['http://parley.test:8080']);
    });

    it('redocly lint reports no errors on the served document', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'parley-openapi-'));
      try {
        const file = join(dir, 'openapi.json');
        await writeFile(file, JSON.stringify(doc));
        // Nothing leaves the machine: no telemetry, no update check.
        const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true', DO_NOT_TRACK: '1', CI: 'true' };
        const result = await run(process.execPath, ['node_modules/@redocly/cli/bin/cli.js', 'lint', file, '--format=json'], { env, timeout: 60_000, maxBuffer: 16 << 20 })
          .catch((err: { stdout?: string; stderr?: string }) => ({ stdout: err.stdout ?? '', stderr: err.stderr ?? '' }));
        const report = JSON.parse(result.stdout) as { totals: { errors: number }; problems: { severity: string; ruleId: string; message: string }[] };
        const errors = report.problems.filter((p) => p.severity === 'error');
        assert.equal(report.totals.errors, 0, JSON.stringify(errors, null, 1));
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });
}

describe('servers names PARLEY_PUBLIC_URL when it is set', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp(DIALECTS[0]!, { PARLEY_PUBLIC_URL: 'https://voice.example.com/' });
  });
  after(() => t.close());

  it('whatever Host the request carries', async () => {
    const doc = (await t.call('GET', '/openapi.json', { token: null, headers: { host: 'evil.example' } })).json();
    assert.deepEqual(doc.servers.map((s: Json) => s.url), ['https://voice.example.com']);
  });
});
