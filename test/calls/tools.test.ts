import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { DIALECTS } from '../helpers/dialects.ts';
import { toolSchema } from '../helpers/fixtures.ts';
import { startReceiver, type Receiver } from './support/receiver.ts';
import { callRecord, startWorld, type World } from './support/world.ts';

const GENERIC = 'Tool call failed: the tool server did not return a usable result.';
const SECRET_AUTH = 'Bearer hook-secret-0f7e';
const SECRET_KEY = 'api-key-5a9c';
const SIGNING = `whsec_${Buffer.from('signing-key-bytes-32-long-enough!').toString('base64')}`;

const tool = (name: string, url: string, extra: Record<string, unknown> = {}) => ({
  type: 'tool_webhook',
  parameters: { name, serverUrl: url, schema: toolSchema(name), headers: { Authorization: SECRET_AUTH, 'X-Api-Key': SECRET_KEY }, ...extra },
});

/** The LLM asks for the given tool calls once, then answers with the text of the tool messages it got. */
function scriptToolRound(w: World, calls: { id: string; name: string; arguments: string }[]) {
  w.llm.respond = (body) => {
    const last = body.messages.at(-1);
    if (last.role === 'user') return { toolCalls: calls };
    const results = body.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.content);
    return { text: `Results: ${results.join(' | ')}` };
  };
}

for (const dialect of DIALECTS) {
  describe(`tool webhooks during a call (${dialect})`, () => {
    let w: World;
    let receiver: Receiver;
    let v6: Receiver;
    let assistantId: string;
    before(async () => {
      w = await startWorld(dialect);
      receiver = await startReceiver('127.0.0.1');
      v6 = await startReceiver('::1');
      assistantId = await w.createAssistant({
        name: 'Tools',
        systemPrompt: 'Use the tools.',
        extensions: [
          tool('lookup_order', receiver.url),
          tool('slow_tool', `${receiver.url}/slow`, { timeoutSeconds: 1 }),
          tool('signed_tool', `${receiver.url}/signed`, { signingSecret: SIGNING }),
          tool('v6_tool', receiver.url),
        ],
      });
      // The policy is applied when the request is sent, not only when configured: point one tool at [::1]
      // as if the allow list had been narrowed since (the API refuses such a URL up front).
      const row = await w.t.db.kysely.selectFrom('assistants').select('extensions').where('id', '=', assistantId).executeTakeFirstOrThrow();
      const extensions = (typeof row.extensions === 'string' ? JSON.parse(row.extensions) : row.extensions) as any[];
      for (const e of extensions) if (e.parameters.name === 'v6_tool') e.parameters.serverUrl = v6.url;
      await w.t.db.kysely.updateTable('assistants').set({ extensions: JSON.stringify(extensions) }).where('id', '=', assistantId).execute();
    });
    beforeEach(() => {
      receiver.requests.length = 0;
      receiver.answer = () => ({ body: 'ok' });
    });
    after(async () => {
      await w.close();
      await receiver.close();
      await v6.close();
    });

    it('sends exactly the interface body with every configured header, and gives the LLM the response text', async () => {
      const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
      receiver.answer = () => ({ body: '{"status":"shipped","eta":"tomorrow"}', contentType: 'application/json' });
      scriptToolRound(w, [{ id: 'call_abc', name: 'lookup_order', arguments: '{"orderNumber":"A-17","express":true}' }]);
      const { id, client } = await w.open(assistantId, undefined, { traceparent });
      const first = w.llm.requests.length;
      client.send({ type: 'user_message', text: 'Where is A-17?' });
      assert.equal((await client.next('assistant_message')).text, 'Results: {"status":"shipped","eta":"tomorrow"}');

      assert.equal(receiver.requests.length, 1);
      const [req] = receiver.requests;
      assert.equal(req?.method, 'POST');
      assert.equal(req?.url, '/tools');
      assert.equal(req?.headers['content-type'], 'application/json');
      assert.equal(req?.headers.authorization, SECRET_AUTH);
      assert.equal(req?.headers['x-api-key'], SECRET_KEY);
      assert.equal(req?.headers['x-request-id'], '4bf92f3577b34da6a3ce929d0e0e4736');
      assert.match(String(req?.headers.traceparent), /^00-4bf92f3577b34da6a3ce929d0e0e4736-[\da-f]{16}-01$/);
      assert.equal(req?.headers['webhook-signature'], undefined, 'no signing without a signingSecret');
      assert.deepEqual(Object.keys(req?.body), ['type', 'name', 'callId', 'transport', 'parameters']);
      assert.deepEqual(req?.body, {
        type: 'tool_webhook', name: 'lookup_order', callId: id, transport: { type: 'websocket' }, parameters: { orderNumber: 'A-17', express: true },
      });

      const toolsSent = w.llm.requests[first].tools;
      assert.equal(toolsSent.length, 4);
      assert.deepEqual(toolsSent[0], { type: 'function', function: { name: 'lookup_order', description: 'Look up an order', parameters: JSON.parse(toolSchema('lookup_order')).parameters } });
      assert.equal(w.llm.requests[first].tool_choice, 'auto');
      const followUp = w.llm.requests[first + 1].messages;
      assert.deepEqual(followUp.slice(-2), [
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'lookup_order', arguments: '{"orderNumber":"A-17","express":true}' } }] },
        { role: 'tool', tool_call_id: 'call_abc', content: '{"status":"shipped","eta":"tomorrow"}' },
      ]);

      assert.deepEqual(client.frames.find((f) => f.type === 'tool_call'), { type: 'tool_call', id: 'call_abc', name: 'lookup_order', arguments: '{"orderNumber":"A-17","express":true}' });
      const result = client.frames.find((f) => f.type === 'tool_result');
      assert.deepEqual({ ...result, latencyMs: 0 }, { type: 'tool_result', id: 'call_abc', name: 'lookup_order', ok: true, statusCode: 200, latencyMs: 0 });
      client.send({ type: 'end' });
      await client.closed;

      const call = await callRecord(w, id);
      assert.equal(call.toolInvocations.length, 1);
      const [invocation] = call.toolInvocations;
      assert.deepEqual({ ...invocation, latencyMs: 0, at: '' }, {
        id: 'call_abc', name: 'lookup_order', arguments: { orderNumber: 'A-17', express: true }, ok: true, statusCode: 200, latencyMs: 0, outcome: 'ok', at: '',
      });
      assert.ok(call.conclusion);
      const everything = JSON.stringify(client.frames) + JSON.stringify(call);
      assert.ok(!everything.includes('hook-secret') && !everything.includes(SECRET_KEY), 'no header value in frames or the record');
    });

    it('gives the generic string for a 500, a timeout, a refused address, a body over 64 KiB and invalid arguments', async () => {
      receiver.answer = (r) => r.url === '/tools/slow' ? { body: 'late', delayMs: 1500 }
        : r.body?.parameters?.orderNumber === 'big' ? { body: 'x'.repeat(64 * 1024 + 1) }
        : { status: 500, body: 'secret stack trace' };
      scriptToolRound(w, [
        { id: 'c500', name: 'lookup_order', arguments: '{"orderNumber":"A-1"}' },
        { id: 'cslow', name: 'slow_tool', arguments: '{"orderNumber":"A-2"}' },
        { id: 'cv6', name: 'v6_tool', arguments: '{"orderNumber":"A-3"}' },
        { id: 'cbig', name: 'lookup_order', arguments: '{"orderNumber":"big"}' },
        { id: 'cbad', name: 'lookup_order', arguments: '{"orderNumber": "A-5"' },
        { id: 'cnone', name: 'no_such_tool', arguments: '{}' },
      ]);
      const { id, client } = await w.open(assistantId);
      const first = w.llm.requests.length;
      client.send({ type: 'user_message', text: 'Try them all' });
      await client.next('assistant_message', 8000);
      const toolMessages = w.llm.requests[first + 1].messages.filter((m: any) => m.role === 'tool');
      assert.deepEqual(toolMessages.map((m: any) => [m.tool_call_id, m.content]), [
        ['c500', GENERIC], ['cslow', GENERIC], ['cv6', GENERIC], ['cbig', GENERIC], ['cbad', GENERIC], ['cnone', GENERIC],
      ]);
      assert.equal(v6.requests.length, 0, 'the refused [::1] receiver got nothing');
      assert.deepEqual(receiver.requests.map((r) => r.body.parameters.orderNumber).sort(), ['A-1', 'A-2', 'big'], 'invalid arguments are not sent');
      const results = client.frames.filter((f) => f.type === 'tool_result');
      assert.ok(results.every((r) => r.ok === false));
      assert.equal(results.find((r) => r.id === 'c500').statusCode, 500);
      client.send({ type: 'end' });
      await client.closed;
      const call = await callRecord(w, id);
      const outcomes = Object.fromEntries(call.toolInvocations.map((i: any) => [i.id, i.outcome]));
      assert.deepEqual(outcomes, { c500: 'http_error', cslow: 'timeout', cv6: 'refused', cbig: 'too_large', cbad: 'invalid_arguments', cnone: 'unknown_tool' });
      assert.equal(call.toolInvocations.find((i: any) => i.id === 'cbad').arguments, '{"orderNumber": "A-5"');
      assert.ok(call.toolInvocations.find((i: any) => i.id === 'cslow').latencyMs >= 900);
      assert.match(w.logs(), /tool call failed/);
    });

    it('runs the tool calls of one turn in parallel', async () => {
      let release!: () => void;
      const bothArrived = new Promise<void>((resolve) => (release = resolve));
      const seenBeforeAnswer: number[] = [];
      receiver.answer = async (r) => {
        if (receiver.requests.length === 2) release();
        await Promise.race([bothArrived, new Promise((resolve) => setTimeout(resolve, 3000))]);
        seenBeforeAnswer.push(receiver.requests.length);
        return { body: `answer ${r.body.parameters.orderNumber}` };
      };
      scriptToolRound(w, [
        { id: 'p1', name: 'lookup_order', arguments: '{"orderNumber":"P-1"}' },
        { id: 'p2', name: 'lookup_order', arguments: '{"orderNumber":"P-2"}' },
      ]);
      const { client } = await w.open(assistantId);
      client.send({ type: 'user_message', text: 'Both please' });
      assert.equal((await client.next('assistant_message', 5000)).text, 'Results: answer P-1 | answer P-2');
      assert.deepEqual(seenBeforeAnswer, [2, 2], 'the receiver saw both requests before answering either');
      client.close();
    });

    it('signs with Standard Webhooks headers when the extension has a signingSecret', async () => {
      scriptToolRound(w, [{ id: 's1', name: 'signed_tool', arguments: '{"orderNumber":"S-1"}' }]);
      const { client } = await w.open(assistantId);
      client.send({ type: 'user_message', text: 'Signed' });
      await client.next('assistant_message');
      const [req] = receiver.requests;
      const id = String(req?.headers['webhook-id']);
      const timestamp = String(req?.headers['webhook-timestamp']);
      assert.match(id, /^msg_[\da-f]{32}$/);
      assert.ok(Math.abs(Number(timestamp) - Date.now() / 1000) < 60);
      const key = Buffer.from(SIGNING.slice('whsec_'.length), 'base64');
      const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${req?.rawBody}`).digest('base64');
      assert.equal(req?.headers['webhook-signature'], `v1,${expected}`);
      client.close();
    });

    it('never logs a header value or secret, even when the tool call fails', async () => {
      // Self-contained (it must be able to fail when run alone): a failing and a signed tool call are logged here.
      receiver.answer = (r) => (r.url === '/tools/signed' ? { body: 'signed ok' } : { status: 503, body: `echo ${SECRET_AUTH}` });
      scriptToolRound(w, [
        { id: 'l1', name: 'lookup_order', arguments: '{"orderNumber":"L-1"}' },
        { id: 'l2', name: 'signed_tool', arguments: '{"orderNumber":"L-2"}' },
      ]);
      const { client } = await w.open(assistantId);
      client.send({ type: 'user_message', text: 'Log this' });
      await client.next('assistant_message');
      client.send({ type: 'end' });
      await client.closed;
      assert.equal(receiver.requests.length, 2, 'both tools were called');
      const logs = w.logs();
      assert.match(logs, /tool call failed/, 'the failure was logged, so the log was looked at');
      for (const secret of ['hook-secret', SECRET_KEY, SIGNING, 'signing-key-bytes']) assert.ok(!logs.includes(secret), secret);
    });
  });
}
