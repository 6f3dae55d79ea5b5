import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { strategyBody } from '../helpers/fixtures.ts';

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

for (const dialect of DIALECTS) {
  describe(`the API's surface: methods, home, OpenAPI, enum errors (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;

    before(async () => {
      t = await buildTestApp(dialect);
      a = await createTenant(t);
    });
    after(() => t.close());

    it('a wrong method on an existing path is a 405 with Allow, in the error envelope', async () => {
      const cases: [string, string, string][] = [
        ['DELETE', '/api/v1/vendors', 'GET, HEAD, POST'],
        ['POST', `/api/v1/vendors/${a.vendorId}`, 'GET, HEAD, PUT, PATCH, DELETE'],
        ['PATCH', `${a.orgPath}/agents/${UNKNOWN}/tasks/${UNKNOWN}`, 'GET, HEAD, DELETE'],
        ['GET', `${a.orgPath}/sip/credentials/${UNKNOWN}/validate`, 'POST'],
        ['PUT', '/healthz', 'GET, HEAD'],
      ];
      for (const [method, url, allow] of cases) {
        const res = await t.call(method, url);
        assert.equal(res.statusCode, 405, `${method} ${url}: ${res.body}`);
        assert.equal(res.headers.allow, allow, `${method} ${url}`);
        const body = res.json();
        assert.equal(body.success, false);
        assert.equal(body.error.code, 'METHOD_NOT_ALLOWED');
        assert.equal(body.traceId, res.headers['x-request-id']);
        assert.match(body.message, new RegExp(`^${method} is not allowed`));
      }
    });

    it('a path that does not exist with any method is still a 404', async () => {
      for (const url of ['/api/v1/nothing', `${a.orgPath}/assistants/${UNKNOWN}/nothing`, '/api/v1/vendors/not-a-uuid/x']) {
        const res = await t.call('DELETE', url);
        assert.equal(res.statusCode, 404, url);
        assert.equal(res.headers.allow, undefined);
        assert.equal(res.json().error.code, 'NOT_FOUND');
      }
    });

    it('GET / leads to the console; the API reference stays at /docs', async () => {
      const res = await t.call('GET', '/', { token: null });
      assert.equal(res.statusCode, 302);
      assert.equal(res.headers.location, '/console/');
      assert.equal((await t.call('GET', '/docs', { token: null })).statusCode < 400, true);
    });

    it('/openapi.json: every response has a description, list defaults are optional, PATCH takes merge-patch+json', async () => {
      const doc = (await t.call('GET', '/openapi.json', { token: null })).json();
      const operations = Object.entries(doc.paths as Record<string, Record<string, any>>)
        .flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method, op })));
      assert.ok(operations.length > 40);
      for (const { path, method, op } of operations) {
        for (const [status, response] of Object.entries(op.responses as Record<string, { description?: string }>)) {
          assert.ok(response.description && response.description !== 'Default Response', `${method} ${path} ${status}`);
        }
        for (const parameter of (op.parameters ?? []) as { in: string; name: string; required?: boolean }[]) {
          if (parameter.in === 'query' && ['page', 'size', 'sort'].includes(parameter.name)) {
            assert.notEqual(parameter.required, true, `${method} ${path} ${parameter.name}`);
          }
        }
      }
      const lists = operations.filter(({ op }) => (op.parameters ?? []).some((p: { name: string }) => p.name === 'page'));
      assert.ok(lists.length >= 8);
      const patches = operations.filter(({ method }) => method === 'patch');
      assert.deepEqual(patches.map(({ path }) => path).sort(), operations.filter(({ method }) => method === 'put').map(({ path }) => path).sort());
      assert.equal(patches.length, 8);
      for (const { path, op } of patches) {
        assert.ok(op.requestBody.content['application/merge-patch+json'], path);
        assert.ok(op.responses['200'], path);
      }
      const taskStatus = operations.find(({ path, method }) => path.endsWith('/tasks') && method === 'get')?.op.parameters.find((p: { name: string }) => p.name === 'status');
      assert.deepEqual(taskStatus.schema.enum, ['PENDING', 'SCHEDULED', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED']);
    });

    it('every enum error lists the allowed values', async () => {
      const strategies = `${a.orgPath}/llm-generation-strategies`;
      const cases: [string, string, unknown, string, RegExp][] = [
        ['POST', strategies, { ...strategyBody, type: 'telepathy' }, 'type', /"text_to_speech", "speech_to_speech"/],
        ['POST', strategies, { ...strategyBody, parameters: { voice: { provider: 'acme' } } }, 'parameters.voice.provider', /"elevenlabs", "openai".*"espeak"/],
        ['POST', strategies, { ...strategyBody, parameters: { outputSampleRate: 11025 } }, 'parameters.outputSampleRate', /8000, 16000, 22050, 24000, 44100, 48000/],
        ['POST', `${a.orgPath}/sip/credentials`, { name: 'T', hostname: 'sip.example.com', username: 'u', password: 'p', transport: 'sctp' }, 'transport', /"udp", "tcp", "tls"/],
        ['POST', `/api/v1/vendors/${a.vendorId}/api-tokens`, { name: 'x', role: 'owner' }, 'role', /"viewer", "editor", "admin"/],
        ['POST', `${a.orgPath}/assistants`, { name: 'x', callEventHooks: [{ type: 'call_exploded', parameters: { url: 'https://h.example.com', secret: 's' } }] }, 'callEventHooks[0].type', /"transcript_ready", "call_started", "call_ended", "task_status_changed"/],
        ['POST', `${a.orgPath}/assistants`, { name: 'x', extensions: [{ type: 'tool_webhok', parameters: {} }] }, 'extensions[0].type', /"tool_webhook", "end_call", "transfer_call", "send_dtmf"/],
        ['GET', `${a.orgPath}/agents/${UNKNOWN}/tasks?status=DONE`, undefined, 'status', /"PENDING", "SCHEDULED", "IN_PROGRESS", "COMPLETED", "FAILED", "CANCELLED"/],
        ['GET', `${a.orgPath}/calls?status=busy`, undefined, 'status', /"ringing", "active", "ended"/],
        ['GET', `${a.orgPath}/webhook-deliveries?eventType=x`, undefined, 'eventType', /"transcript_ready"/],
      ];
      for (const [method, url, body, path, allowed] of cases) {
        const res = await t.call(method, url, body === undefined ? {} : { body });
        assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
        const detail = (res.json().error.details as { path: string; message: string }[]).find((d) => d.path === path);
        assert.ok(detail, `${path} in ${res.body}`);
        assert.match(detail.message, /^must be one of: /, res.body);
        assert.match(detail.message, allowed, res.body);
      }
    });

    it("an agent's pause state can be read, and pausing answers it too", async () => {
      const agent = await t.call('POST', `${a.orgPath}/agents`, { body: { name: 'Caller' } });
      const pauseUrl = `${agent.headers.location as string}/tasks/pause`;
      assert.deepEqual((await t.call('GET', pauseUrl)).json().data, { paused: false, pausedAt: null });
      const paused = await t.call('POST', pauseUrl);
      assert.equal(paused.json().data.paused, true);
      const since = paused.json().data.pausedAt as string;
      assert.ok(Date.parse(since) > 0);
      assert.deepEqual((await t.call('GET', pauseUrl)).json().data, { paused: true, pausedAt: since });
      assert.equal((await t.call('POST', pauseUrl)).json().data.pausedAt, since, 'pausing again keeps when it began');
      const resumed = await t.call('POST', `${agent.headers.location as string}/tasks/resume`);
      assert.deepEqual(resumed.json().data, { paused: false, pausedAt: null });
      assert.deepEqual((await t.call('GET', pauseUrl)).json().data, { paused: false, pausedAt: null });
      assert.equal((await t.call('GET', `${a.orgPath}/agents/${UNKNOWN}/tasks/pause`)).statusCode, 404);
      const viewer = await t.call('POST', `/api/v1/vendors/${a.vendorId}/api-tokens`, { body: { name: 'v', role: 'viewer' } });
      assert.equal((await t.call('GET', pauseUrl, { token: viewer.json().data.token })).statusCode, 200, 'tasks:read is enough to read it');
    });
  });
}
