// The call's LLM is a provider like the others: an organization's anthropic and
// openai_compatible credentials serve its calls, against fake servers that speak each protocol
// (tool calls streamed, run through a real webhook receiver, their results handed back), the
// placeholders are filled the same, and one organization's key never serves another's call.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DIALECTS } from '../helpers/dialects.ts';
import { createTenant, type Tenant } from '../helpers/app.ts';
import { toolSchema } from '../helpers/fixtures.ts';
import { startAnthropicServer, type AnthropicServer } from './support/anthropic-server.ts';
import { startLlmServer, type LlmServer } from './support/llm-server.ts';
import { startReceiver, type Receiver } from './support/receiver.ts';
import { connect } from './support/client.ts';
import { callRecord, startWorld, type World } from './support/world.ts';

const KEY_B = 'sk-ant-api03-organization-b-0123456789';
const KEY_C = 'sk-ant-api03-organization-c-9876543210';
const LOOKUP = { id: 'toolu_01A09q90qw90lq917835lq9', name: 'lookup_order', arguments: '{"orderNumber":"A-17"}' };

for (const dialect of DIALECTS) {
  describe(`an organization's own LLM serves its calls (${dialect})`, () => {
    let w: World;
    let anthropic: AnthropicServer;
    let compatible: LlmServer;
    let tools: Receiver;
    before(async () => {
      anthropic = await startAnthropicServer([KEY_B, KEY_C]);
      compatible = await startLlmServer();
      tools = await startReceiver();
      tools.answer = () => ({ body: 'Order A-17 ships on Monday.' });
      w = await startWorld(dialect);
    });
    after(async () => {
      await w.close();
      await anthropic.close();
      await compatible.close();
      await tools.close();
    });

    /** An organization whose credential reaches `baseUrl`, and an assistant whose strategy names `llm`. */
    async function organization(name: string, credential: Record<string, unknown>, llm: { provider: string; model: string }) {
      const tenant = await createTenant(w.t, name);
      if (Object.keys(credential).length) {
        const stored = await w.api('POST', `${tenant.orgPath}/provider-credentials`, credential);
        assert.equal(stored.status, 201, JSON.stringify(stored.body));
      }
      const strategy = await w.api('POST', `${tenant.orgPath}/llm-generation-strategies`, { name: 'Own LLM', type: 'text_to_speech', parameters: { llm, temperature: 0.4 } });
      assert.equal(strategy.status, 201, JSON.stringify(strategy.body));
      const assistant = await w.api('POST', `${tenant.orgPath}/assistants`, {
        name: 'Orders', systemPrompt: 'You help {{firstName}} with orders.', systemPromptGreeting: 'Hello {{firstName}}, how can I help?',
        llmAudioContentGenerationStrategyId: strategy.body.data.id,
        extensions: [{ type: 'tool_webhook', parameters: { name: 'lookup_order', serverUrl: tools.url, schema: toolSchema('lookup_order') } }],
      });
      assert.equal(assistant.status, 201, JSON.stringify(assistant.body));
      return { tenant, assistantId: assistant.body.data.id as string };
    }

    /** A text call that asks about an order and waits for the answer after the tool; answers the frames and the record. */
    async function orderCall(tenant: Tenant, assistantId: string) {
      const started = await w.api('POST', `${tenant.orgPath}/assistants/${assistantId}/calls`, { userValues: { firstName: 'Ada' } });
      assert.equal(started.status, 201, JSON.stringify(started.body));
      const client = await connect(started.body.data.websocketUrl);
      await client.next('call_started');
      assert.equal((await client.next('assistant_message')).text, 'Hello Ada, how can I help?');
      client.send({ type: 'user_message', text: 'Where is my order A-17?' });
      const toolCall = await client.next('tool_call');
      const toolResult = await client.next('tool_result');
      const answer = await client.next('assistant_message');
      client.send({ type: 'end' });
      await client.closed;
      return { toolCall, toolResult, answer, record: await callRecord({ ...w, tenant }, started.body.data.id) };
    }

    it('anthropic: the Messages API with the organization\'s key, the system prompt on top, a streamed tool call run and answered', { timeout: 30_000 }, async () => {
      const { tenant, assistantId } = await organization('Anthropic org', { provider: 'anthropic', apiKey: KEY_B, baseUrl: anthropic.baseUrl }, { provider: 'anthropic', model: 'claude-sonnet-4-5' });
      const from = anthropic.requests.length;
      anthropic.respond = (body) => (body.messages.at(-1).content.some?.((b: any) => b.type === 'tool_result') ? { text: 'It ships on Monday, Ada.' } : { text: 'Let me look.', toolCalls: [LOOKUP] });
      const { toolCall, toolResult, answer, record } = await orderCall(tenant, assistantId);
      assert.deepEqual([toolCall.id, toolCall.name, toolCall.arguments], [LOOKUP.id, 'lookup_order', LOOKUP.arguments]);
      assert.equal(toolResult.ok, true);
      assert.equal(answer.text, 'It ships on Monday, Ada.');
      assert.deepEqual(anthropic.problems, []);
      const [first, second] = anthropic.requests.slice(from);
      assert.equal(first.system, 'You help Ada with orders.');
      assert.deepEqual(first.messages, [
        { role: 'assistant', content: [{ type: 'text', text: 'Hello Ada, how can I help?' }] },
        { role: 'user', content: [{ type: 'text', text: 'Where is my order A-17?' }] },
      ]);
      assert.deepEqual([first.model, first.temperature, first.tool_choice, first.tools[0].name], ['claude-sonnet-4-5', 0.4, { type: 'auto' }, 'lookup_order']);
      assert.deepEqual(second.messages.slice(-2), [
        { role: 'assistant', content: [{ type: 'text', text: 'Let me look.' }, { type: 'tool_use', id: LOOKUP.id, name: 'lookup_order', input: { orderNumber: 'A-17' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: LOOKUP.id, content: 'Order A-17 ships on Monday.' }] },
      ]);
      assert.ok(anthropic.headers.slice(from).every((h) => h['x-api-key'] === KEY_B && h['anthropic-version'] === '2023-06-01' && h.authorization === undefined));
      assert.equal(record.providers.llm, 'anthropic');
      assert.deepEqual(record.transcript.map((e: any) => e.text), ['Hello Ada, how can I help?', 'Where is my order A-17?', 'Let me look.', 'It ships on Monday, Ada.']);
      assert.equal(record.toolInvocations[0].ok, true);
    });

    it('openai_compatible: a keyless self-hosted server at the credential\'s baseUrl, its streamed tool call run and answered', { timeout: 30_000 }, async () => {
      const { tenant, assistantId } = await organization('Local org', { provider: 'openai_compatible', baseUrl: compatible.baseUrl }, { provider: 'openai_compatible', model: 'llama-3.3-70b' });
      const credential = (await w.api('GET', `${tenant.orgPath}/provider-credentials`)).body.data[0];
      assert.deepEqual([credential.provider, credential.apiKey, credential.baseUrl], ['openai_compatible', null, compatible.baseUrl]);
      const from = compatible.requests.length;
      compatible.respond = (body) => (body.messages.at(-1).role === 'tool' ? { text: 'Monday it is.' } : { toolCalls: [{ ...LOOKUP, id: 'call_7' }] });
      const { toolCall, answer, record } = await orderCall(tenant, assistantId);
      assert.equal(toolCall.name, 'lookup_order');
      assert.equal(answer.text, 'Monday it is.');
      const [first, second] = compatible.requests.slice(from);
      assert.equal(first.model, 'llama-3.3-70b');
      assert.deepEqual(first.messages[0], { role: 'system', content: 'You help Ada with orders.' });
      assert.deepEqual(second.messages.at(-1), { role: 'tool', tool_call_id: 'call_7', content: 'Order A-17 ships on Monday.' });
      assert.ok(compatible.headers.slice(from).every((h) => h.authorization === undefined), 'no key, no Authorization header');
      assert.equal(record.providers.llm, 'openai_compatible');
    });

    it('one organization\'s key never serves another\'s call; an organization without one fails at start, saying which key to add', { timeout: 30_000 }, async () => {
      const b = await organization('Org B', { provider: 'anthropic', apiKey: KEY_B, baseUrl: anthropic.baseUrl }, { provider: 'anthropic', model: 'claude-haiku-4-5' });
      const c = await organization('Org C', { provider: 'anthropic', apiKey: KEY_C, baseUrl: anthropic.baseUrl }, { provider: 'anthropic', model: 'claude-haiku-4-5' });
      anthropic.respond = (body) => (body.messages.at(-1).content.some?.((x: any) => x.type === 'tool_result') ? { text: 'Done.' } : { toolCalls: [LOOKUP] });
      for (const [org, key, other] of [[b, KEY_B, KEY_C], [c, KEY_C, KEY_B], [b, KEY_B, KEY_C]] as const) {
        const from = anthropic.headers.length;
        await orderCall(org.tenant, org.assistantId);
        const keys = anthropic.headers.slice(from).map((h) => h['x-api-key']);
        assert.ok(keys.length === 2 && keys.every((k) => k === key), `${org.tenant.orgPath}: ${keys.join(', ')} (never ${other})`);
      }

      const d = await organization('Org D', {}, { provider: 'anthropic', model: 'claude-haiku-4-5' });
      const before = anthropic.requests.length;
      const started = await w.api('POST', `${d.tenant.orgPath}/assistants/${d.assistantId}/calls`, {});
      const client = await connect(started.body.data.websocketUrl);
      assert.match((await client.next('error')).message, /llm:anthropic failed \(no anthropic key: add an anthropic provider credential to the organization, or set ANTHROPIC_API_KEY\)/);
      assert.equal((await client.next('call_ended')).reason, 'error');
      const record = await callRecord({ ...w, tenant: d.tenant }, started.body.data.id);
      assert.deepEqual([record.failure.source, record.endReason], ['llm:anthropic', 'error']);
      assert.equal(anthropic.requests.length, before, 'nothing was sent anywhere');
      for (const text of [JSON.stringify(record), w.logs()]) assert.ok(!text.includes(KEY_B) && !text.includes(KEY_C), 'no key in a record or the log');
    });

    it('an Anthropic error answer ends the call naming the provider and its words, never the key', { timeout: 30_000 }, async () => {
      const { tenant, assistantId } = await organization('Refused org', { provider: 'anthropic', apiKey: KEY_B, baseUrl: anthropic.baseUrl }, { provider: 'anthropic', model: 'claude-haiku-4-5' });
      anthropic.respond = () => ({ status: 400, errorMessage: `messages: something is off with ${KEY_B}` });
      const started = await w.api('POST', `${tenant.orgPath}/assistants/${assistantId}/calls`, {});
      const client = await connect(started.body.data.websocketUrl);
      await client.next('call_started');
      client.send({ type: 'user_message', text: 'Hi' });
      assert.match((await client.next('error')).message, /HTTP 400: messages: something is off with/);
      await client.closed;
      const record = await callRecord({ ...w, tenant }, started.body.data.id);
      assert.deepEqual([record.failure.source, record.failure.statusCode], ['llm:anthropic', 400]);
      assert.ok(!JSON.stringify(record).includes(KEY_B) && !w.logs().includes(KEY_B));
    });
  });
}
