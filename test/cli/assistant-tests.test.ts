import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { createApiToken } from '../helpers/app.ts';
import { PARLEY } from '../helpers/cli.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { toolSchema } from '../helpers/fixtures.ts';
import { until } from '../helpers/until.ts';
import { startReceiver, type Receiver } from '../calls/support/receiver.ts';
import { callRecord, startWorld, type World } from '../calls/support/world.ts';

/*
 * `parley test` as CI runs it: the real CLI process against a real service (an app listening on
 * loopback), its calls through the real call engine, and the fake OpenAI-compatible LLM playing
 * all three parts: the assistant under test, the caller of persona tests, and the judge.
 */

const ORDER_DESK = 'You are the order desk of Acme.';

/** The fake LLM's answers, by who is asking (the system prompt says it). */
function script(body: any) {
  const system: string = body.messages[0]?.content ?? '';
  const last = body.messages.at(-1);
  if (system.startsWith('You judge')) {
    const passed = /shipped/.test(last.content.split('Criterion:')[1] ?? '');
    return { text: JSON.stringify({ passed, reason: passed ? 'The assistant said the order shipped.' : 'No refund was offered.' }) };
  }
  if (system.startsWith('You play a caller')) {
    const heard = body.messages.filter((m: any) => m.role === 'user').map((m: any) => m.content).join(' ');
    return { text: /shipped/.test(heard) ? 'Great, thanks. Goodbye. [HANG UP]' : 'Hi, where is my order A-17?' };
  }
  if (last.role === 'tool') return { text: `Order A-17: ${last.content}.` };
  if (/goodbye|bye/i.test(last.content ?? '')) return { toolCalls: [{ id: `end_${body.messages.length}`, name: 'end_call', arguments: '{}' }] };
  if (/A-17/.test(last.content ?? '')) return { toolCalls: [{ id: `call_${body.messages.length}`, name: 'lookup_order', arguments: '{"orderNumber":"A-17","express":false}' }] };
  return { text: 'How can I help?' };
}

const PASSING = `
assistant: Order desk
tests:
  - name: a scripted caller gets the order's status
    caller:
      turns: ["Where is order A-17?", "Thanks, bye"]
    mocks:
      - tool: lookup_order
        arguments: { orderNumber: A-17 }
        response: { status: shipped }
    expect:
      toolsCalled:
        - tool: lookup_order
          arguments: { orderNumber: A-17 }
        - tool: lookup_order
          argumentsMatch: '"express":\\s*false'
      toolsNotCalled: [cancel_order]
      transcriptContains: [shipped]
      transcriptNotContains: [refund]
      transcriptMatches: ['Order A-\\d+']
      endedByEndCall: true
      maxTurns: 2
  - name: a persona reaches its goal
    caller:
      persona: Ada, a busy customer who answers in few words
      goal: Learn whether order A-17 has shipped
      maxTurns: 4
    mocks:
      - tool: lookup_order
        response: '{"status":"shipped"}'
    expect:
      toolsCalled: [{ tool: lookup_order }]
      endedByEndCall: true
      criteria: [The assistant says the order has shipped.]
`;

const FAILING = `
assistant: Order desk
tests:
  - name: 'fails <on> "purpose" & says why'
    caller:
      turns: ["Where is order A-17?"]
    mocks:
      - tool: lookup_order
        arguments: { orderNumber: B-99 }
        response: nothing
    expect:
      toolsNotCalled: [lookup_order]
      transcriptContains: [refund]
      criteria: [The assistant offers a refund.]
`;

interface Ran {
  code: number | null;
  out: string;
  err: string;
}

/** The real `parley` process, its environment the given one plus the PATH it needs. */
function parley(argv: string[], env: Record<string, string>, cwd = process.cwd()): Promise<Ran> {
  return new Promise((resolve) => {
    // Run from the test's folder: tsx and the CLI named by absolute location.
    const command = PARLEY.map((a) => (a === 'tsx' ? import.meta.resolve('tsx') : a.startsWith('src/') ? join(process.cwd(), a) : a));
    execFile(process.execPath, [...command, 'test', ...argv], {
      cwd, env: { PATH: process.env.PATH ?? '', ...env }, timeout: 120_000,
    }, (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, out: stdout, err: stderr }));
  });
}

const junit = (file: string) => {
  const text = readFileSync(file, 'utf8');
  assert.equal(XMLValidator.validate(text), true, 'well-formed XML');
  return new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => ['testsuite', 'testcase'].includes(name) }).parse(text);
};

for (const dialect of DIALECTS) {
  describe(`parley test, through the real CLI against a real service (${dialect})`, { timeout: 900_000 }, () => {
    let w: World;
    let tools: Receiver;
    let hooks: Receiver;
    let dir: string;
    let env: Record<string, string>;
    let assistantId: string;
    before(async () => {
      w = await startWorld(dialect);
      w.llm.respond = script;
      tools = await startReceiver();
      hooks = await startReceiver();
      assistantId = await w.createAssistant({
        name: 'Order desk', systemPrompt: ORDER_DESK, systemPromptGreeting: 'Acme orders, hello.',
        callEventHooks: ['call_started', 'call_ended', 'transcript_ready'].map((type) => ({ type, parameters: { url: `${hooks.url}/${type}`, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' } })),
        extensions: [
          { type: 'tool_webhook', parameters: { name: 'lookup_order', serverUrl: tools.url, schema: toolSchema('lookup_order'), headers: { Authorization: 'Bearer real-tool-secret' } } },
          { type: 'end_call', parameters: {} },
        ],
      });
      const token = await createApiToken(w.t, w.tenant.vendorId, { role: 'editor', organizationId: w.tenant.organizationId });
      env = { PARLEY_URL: w.address, PARLEY_TOKEN: token, PARLEY_VENDOR: w.tenant.vendorId, PARLEY_ORGANIZATION: w.tenant.organizationId };
      dir = mkdtempSync(join(tmpdir(), 'parley-assistant-tests-'));
      mkdirSync(join(dir, 'pass'));
      mkdirSync(join(dir, 'fail'));
      writeFileSync(join(dir, 'pass', 'orders.test.yaml'), PASSING);
      writeFileSync(join(dir, 'fail', 'orders-broken.test.yml'), FAILING);
    });
    after(async () => {
      await w?.close();
      await tools?.close();
      await hooks?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('a suite with failing tests: the report says what failed and why, valid JUnit XML, exit 1; the tool server is never called', async () => {
      const ran = await parley(['pass', 'fail', '--junit', 'results.xml'], env, dir);
      assert.equal(ran.code, 1, ran.out + ran.err);
      assert.match(ran.out, /PASS {2}a scripted caller gets the order's status/);
      assert.match(ran.out, /PASS {2}a persona reaches its goal/);
      assert.match(ran.out, /ok +judged: The assistant says the order has shipped\.\n +The assistant said the order shipped\./);
      assert.match(ran.out, /FAIL {2}fails <on> "purpose" & says why/);
      assert.match(ran.out, /FAIL {2}did not call lookup_order\n +called lookup_order \{"orderNumber":"A-17","express":false\}/);
      assert.match(ran.out, /lookup_order was called with .* and no mock answers it/);
      assert.match(ran.out, /FAIL {2}judged: The assistant offers a refund\.\n +No refund was offered\./);
      assert.match(ran.out, /3 tests: 2 passed, 1 failed/);
      assert.match(ran.out, /assistant: Acme orders, hello\.\n +caller: Where is order A-17\?/, 'the caller waited for the greeting');
      assert.equal(tools.requests.length, 0, 'no request reached the real tool server');

      const xml = junit(join(dir, 'results.xml'));
      assert.equal(xml.testsuites.tests, '3');
      assert.equal(xml.testsuites.failures, '1');
      const [passing, failing] = xml.testsuites.testsuite;
      assert.equal(passing.name, join('pass', 'orders.test.yaml'));
      assert.deepEqual([passing.tests, passing.failures], ['2', '0']);
      assert.deepEqual([failing.tests, failing.failures], ['1', '1']);
      assert.equal(passing.testcase.filter((c: any) => c.failure).length, 0);
      const [broken] = failing.testcase;
      assert.equal(broken.name, 'fails <on> "purpose" & says why', 'names are escaped and read back whole');
      assert.match(broken.failure['#text'], /did not call lookup_order/);
      assert.match(broken.failure.message, /checks failed/);
    });

    it('a suite that passes exits 0; the calls ran the real engine, marked as answered by their client', async () => {
      const ran = await parley([join(dir, 'pass')], env);
      assert.equal(ran.code, 0, ran.out + ran.err);
      assert.match(ran.out, /2 tests: 2 passed, 0 failed/);
      const callId = /call ([0-9a-f-]{36})/.exec(ran.out)?.[1] as string;
      const record = await callRecord(w, callId);
      assert.deepEqual(record.transport, { type: 'websocket', clientTools: true });
      assert.equal(record.endReason, 'assistant_ended');
      assert.equal(tools.requests.length, 0);
      const deliveries = await w.t.db.kysely.selectFrom('webhook_deliveries').select('id').execute();
      assert.equal(deliveries.length, 0, 'a call whose tools were mocked sends no call event hooks');
      // The same assistant called as usual does send them: the check above can fail.
      const { client } = await w.open(assistantId);
      client.send({ type: 'end' });
      await client.next('call_ended');
      await until('the hooks of a usual call', () => w.t.db.kysely.selectFrom('webhook_deliveries').select('id').execute(), (rows) => rows.length >= 2, 20_000);
    });

    it('usage errors exit 2: a file that does not read, an unknown assistant, a version it does not have', async () => {
      writeFileSync(join(dir, 'bad.test.yaml'), 'assistant: Order desk\ntests:\n  - name: x\n    caller: { turns: [hi] }\n    expect: { toolCalled: [] }\n');
      const bad = await parley(['bad.test.yaml'], env, dir);
      assert.equal(bad.code, 2);
      assert.match(bad.err, /bad\.test\.yaml: tests\.0\.expect\.toolCalled: is not a field of a test file/);
      writeFileSync(join(dir, 'nobody.test.yaml'), PASSING.replace('assistant: Order desk', 'assistant: Nobody'));
      const nobody = await parley(['nobody.test.yaml'], env, dir);
      assert.equal(nobody.code, 2);
      assert.match(nobody.err, /no assistant is named "Nobody"/);
      const version = await parley(['pass', '--version', '99'], env, dir);
      assert.equal(version.code, 2);
      assert.match(version.err, /has no version 99 \(--version\)/);
    });

    it('--version runs that version: the current prompt changed, version 1 still answers as before', async () => {
      const put = await w.api('PATCH', `${w.tenant.orgPath}/assistants/${assistantId}`, { systemPrompt: 'You are closed today.' }, { 'content-type': 'application/merge-patch+json' });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      const seen: string[] = [];
      w.llm.respond = (body) => {
        seen.push(body.messages[0]?.content);
        return script(body);
      };
      const ran = await parley(['pass', '--version', '1'], env, dir);
      assert.equal(ran.code, 0, ran.out + ran.err);
      assert.ok(seen.includes(ORDER_DESK) && !seen.includes('You are closed today.'), 'the calls ran version 1\'s prompt');
      w.llm.respond = script;
    });

    it('a call start with clientTools needs the kind\'s write permission; a version it lacks is a 400 naming version', async () => {
      const caller = await createApiToken(w.t, w.tenant.vendorId, { permissions: ['calls:write', 'assistants:read'], organizationId: w.tenant.organizationId });
      const path = `${w.tenant.orgPath}/assistants/${assistantId}/calls`;
      const denied = await w.api('POST', path, { clientTools: true }, { authorization: `Bearer ${caller}` });
      assert.equal(denied.status, 403, JSON.stringify(denied.body));
      const missing = await w.api('POST', path, { version: 99 });
      assert.equal(missing.status, 400);
      assert.equal(missing.body.error.details[0].path, 'version');
    });
  });
}
