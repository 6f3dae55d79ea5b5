import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { toolSchema } from '../helpers/fixtures.ts';
import { connect } from './support/client.ts';
import { startReceiver, type Receiver } from './support/receiver.ts';
import { callRecord, startWorld, type World } from './support/world.ts';

/*
 * Calls started with clientTools (what `parley test` mocks tools with): the client answers each
 * tool webhook call with a tool_answer frame, and the tool's server never hears of it.
 */
for (const dialect of DIALECTS) {
  describe(`tool webhooks answered by the call's client (${dialect})`, { timeout: 120_000 }, () => {
    let w: World;
    let receiver: Receiver;
    let assistantId: string;
    before(async () => {
      w = await startWorld(dialect);
      receiver = await startReceiver();
      assistantId = await w.createAssistant({
        name: 'Client tools', systemPrompt: 'Use the tool.',
        extensions: [{ type: 'tool_webhook', parameters: { name: 'lookup_order', serverUrl: receiver.url, schema: toolSchema('lookup_order'), timeoutSeconds: 2 } }],
      });
      w.llm.respond = (body) => {
        const last = body.messages.at(-1);
        if (last.role === 'tool') return { text: `Tool said: ${last.content}` };
        return { toolCalls: [{ id: `call_${body.messages.length}`, name: 'lookup_order', arguments: '{"orderNumber":"A-17"}' }] };
      };
    });
    after(async () => {
      await w?.close();
      await receiver?.close();
    });

    const start = async (body: Record<string, unknown>) => {
      const res = await w.api('POST', `${w.tenant.orgPath}/assistants/${assistantId}/calls`, body);
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const client = await connect(res.body.data.websocketUrl);
      await client.next('call_started');
      return { id: res.body.data.id as string, client };
    };

    it('the answer the client gives is the tool result the LLM gets, with its status; the server gets nothing', async () => {
      const { id, client } = await start({ clientTools: true });
      client.send({ type: 'user_message', text: 'Where is A-17?' });
      const call = await client.next('tool_call');
      client.send({ type: 'tool_answer', id: call.id, status: 200, body: '{"status":"shipped"}' });
      const result = await client.next('tool_result');
      assert.deepEqual([result.ok, result.statusCode], [true, 200]);
      assert.equal((await client.next('assistant_message')).text, 'Tool said: {"status":"shipped"}');
      await client.next('turn_done');
      client.send({ type: 'user_message', text: 'And B-2?' });
      const second = await client.next('tool_call');
      client.send({ type: 'tool_answer', id: second.id, status: 404, body: 'unknown' });
      assert.deepEqual([(await client.next('tool_result')).statusCode], [404]);
      assert.match((await client.next('assistant_message')).text, /Tool call failed/);
      await client.next('turn_done');
      client.send({ type: 'tool_answer', id: 'nobody-asked', body: 'x' });
      assert.match((await client.next('error')).message, /No tool call nobody-asked is waiting/);
      client.send({ type: 'end' });
      await client.next('call_ended');
      assert.equal(receiver.requests.length, 0);
      const record = await callRecord(w, id);
      assert.deepEqual(record.transport, { type: 'websocket', clientTools: true });
      assert.equal(record.toolInvocations.length, 2);
    });

    it('a client that does not answer: the tool times out like its server would; a usual call refuses tool_answer', async () => {
      const { client } = await start({ clientTools: true });
      client.send({ type: 'user_message', text: 'Where is A-17?' });
      await client.next('tool_call');
      const result = await client.next('tool_result', 10_000);
      assert.equal(result.ok, false);
      await client.next('turn_done', 10_000);
      client.send({ type: 'end' });
      await client.next('call_ended');
      const usual = await start({});
      usual.client.send({ type: 'tool_answer', id: 'x', body: 'y' });
      assert.match((await usual.client.next('error')).message, /start the call with "clientTools"/);
      usual.client.send({ type: 'end' });
      await usual.client.next('call_ended');
      assert.equal(receiver.requests.length, 0);
    });

    it('clientTools is refused with protocol twilio (400 naming it)', async () => {
      const res = await w.api('POST', `${w.tenant.orgPath}/assistants/${assistantId}/calls`, { clientTools: true, protocol: 'twilio' });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.details[0].path, 'clientTools');
    });
  });
}
