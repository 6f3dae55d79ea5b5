/**
 * Issue 25, defect 8: a model's tool arguments skipped the JSON depth guard of request bodies.
 * Arguments 1,100 deep were stored and broke the organization's overview for good; 8,000 deep
 * ended the call with "language model failed (RangeError)"; 3 MB were stored as they came. Now
 * the tool call fails with a result that tells the LLM why, the call goes on, and the arguments
 * are neither sent nor stored. The fake LLM server speaks OpenAI's streaming protocol.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_TOOL_ARGUMENTS_BYTES } from '../../src/calls/tool-arguments.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { toolSchema } from '../helpers/fixtures.ts';
import { startReceiver, type Receiver } from '../calls/support/receiver.ts';
import { callRecord, startWorld, type World } from '../calls/support/world.ts';

const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
const ATTACKS: Record<string, { arguments: string; refusal: RegExp }> = {
  deep1100: { arguments: nested(1_100), refusal: /nested deeper than 64 levels/ },
  deep8000: { arguments: nested(8_000), refusal: /nested deeper than 64 levels/ },
  huge: { arguments: JSON.stringify({ orderNumber: 'x'.repeat(3 * 1024 * 1024) }), refusal: /larger than 64 KiB/ },
};

for (const dialect of DIALECTS) {
  describe(`tool arguments a prompt-injected model writes (${dialect})`, () => {
    let w: World;
    let tools: Receiver;
    let assistantId: string;
    before(async () => {
      tools = await startReceiver();
      w = await startWorld(dialect);
      assistantId = await w.createAssistant({
        name: 'Injected', systemPrompt: 'Look orders up.',
        extensions: [{ type: 'tool_webhook', parameters: { name: 'lookup_order', serverUrl: tools.url, schema: toolSchema('lookup_order') } }],
      });
      // The user's words name the attack; after the tool's result the model answers in words.
      w.llm.respond = (body) => {
        const last = body.messages.at(-1);
        if (last.role === 'tool') return { text: `Noted: ${String(last.content).slice(0, 200)}` };
        const attack = ATTACKS[String(last.content)];
        return attack ? { toolCalls: [{ id: `call_${last.content}`, name: 'lookup_order', arguments: attack.arguments }] } : { text: 'Hello.' };
      };
    });
    after(async () => {
      await w.close();
      await tools.close();
    });

    it('1,100 deep, 8,000 deep and 3 MB: each tool call fails with a clear result, the call goes on, nothing deep or huge is sent or stored', { timeout: 60_000 }, async () => {
      const { id, client } = await w.open(assistantId);
      for (const [name, attack] of Object.entries(ATTACKS)) {
        const asked = w.llm.requests.length;
        client.send({ type: 'user_message', text: name });
        const result = await client.next('tool_result', 15_000);
        assert.equal(result.ok, false, name);
        const answer = await client.next('assistant_message', 15_000);
        assert.match(answer.text, /^Noted: Tool call refused: its arguments/, name);
        // The LLM was told why, and its own call came back to it without the arguments.
        const followUp = w.llm.requests.slice(asked).find((r) => r.messages.at(-1)?.role === 'tool');
        assert.ok(followUp, `${name}: the LLM was asked again with the tool's result`);
        assert.match(followUp.messages.at(-1).content, attack.refusal, name);
        assert.ok(JSON.stringify(followUp.messages).length < 64 * 1024, `${name}: the history sent back is small`);
      }
      assert.equal(tools.requests.length, 0, 'nothing reached the tool server');
      // The call is alive and answers.
      client.send({ type: 'user_message', text: 'Are you there?' });
      assert.equal((await client.next('assistant_message', 15_000)).text, 'Hello.');
      client.send({ type: 'end' });
      await client.closed;

      const record = await callRecord(w, id);
      assert.equal(record.endReason, 'client_ended');
      assert.deepEqual(record.failure, null);
      assert.equal(record.toolInvocations.length, 3);
      for (const invocation of record.toolInvocations) {
        assert.equal(invocation.outcome, 'invalid_arguments');
        assert.ok(JSON.stringify(invocation.arguments).length < 200, `stored: ${JSON.stringify(invocation.arguments).slice(0, 200)}`);
        assert.match(invocation.arguments.refused, /nested deeper than 64 levels|larger than 64 KiB/);
      }
      assert.ok(JSON.stringify(record).length < MAX_TOOL_ARGUMENTS_BYTES, 'the record is small');
      const list = await w.api('GET', `${w.tenant.orgPath}/calls`);
      assert.equal(list.status, 200);

      // The organization's overview over a range holding the call, and the analytics of its tools.
      const overview = await w.api('GET', `${w.tenant.orgPath}/analytics/overview`);
      assert.equal(overview.status, 200, JSON.stringify(overview.body));
      assert.equal(overview.body.data.tools.invocations, 3);
      assert.equal(overview.body.data.tools.errors, 3);

      // The records go with their organization.
      for (const path of [`/assistants/${assistantId}`]) assert.equal((await w.api('DELETE', `${w.tenant.orgPath}${path}`)).status, 200);
      const strategies = (await w.api('GET', `${w.tenant.orgPath}/llm-generation-strategies`)).body.data;
      for (const s of strategies) assert.equal((await w.api('DELETE', `${w.tenant.orgPath}/llm-generation-strategies/${s.id}`)).status, 200);
      const deleted = await w.api('DELETE', w.tenant.orgPath);
      assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
      assert.equal((await w.t.ctx.db.kysely.selectFrom('calls').select('id').where('id', '=', id).execute()).length, 0);
    });
  });
}
