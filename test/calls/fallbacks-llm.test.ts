// LLM fallbacks: when the call's LLM fails before it produced anything for a turn (an error
// answer, a refused connection, no first token in time), the turn goes to the next one without
// the caller seeing an error; the failed one is skipped for the cool-down and tried again after
// it; the record says who answered each turn. A failure in the middle of an answer ends the call
// as before. Fake Anthropic and chat-completions servers, the clock moved by the test.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { COOL_DOWN_MS } from '../../src/calls/fallbacks/health.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { createTenant, type Tenant } from '../helpers/app.ts';
import { startAnthropicServer, type AnthropicServer } from './support/anthropic-server.ts';
import { startLlmServer, type LlmServer } from './support/llm-server.ts';
import { connect, type CallClient } from './support/client.ts';
import { callRecord, startWorld, type World } from './support/world.ts';

const KEY = 'sk-ant-api03-fallback-test-0123456789';

for (const dialect of DIALECTS) {
  describe(`LLM fallbacks (${dialect})`, () => {
    let w: World;
    let anthropic: AnthropicServer;
    let compatible: LlmServer;
    const clock = new ManualClock(new Date());
    before(async () => {
      anthropic = await startAnthropicServer([KEY]);
      compatible = await startLlmServer();
      compatible.respond = () => ({ text: 'The fallback answers.' });
      w = await startWorld(dialect, { PARLEY_LLM_FIRST_TOKEN_SECONDS: '0.5', PARLEY_LLM_TOKEN_GAP_SECONDS: '0.5' }, { clock });
    });
    after(async () => {
      await w.close();
      await anthropic.close();
      await compatible.close();
    });

    /** An organization whose calls ask Anthropic first (at `anthropicUrl`) and the chat-completions server after it. */
    async function organization(name: string, anthropicUrl = anthropic.baseUrl): Promise<{ tenant: Tenant; assistantId: string }> {
      const tenant = await createTenant(w.t, name);
      for (const body of [{ provider: 'anthropic', apiKey: KEY, baseUrl: anthropicUrl }, { provider: 'openai_compatible', baseUrl: compatible.baseUrl }]) {
        assert.equal((await w.api('POST', `${tenant.orgPath}/provider-credentials`, body)).status, 201);
      }
      const strategy = await w.api('POST', `${tenant.orgPath}/llm-generation-strategies`, {
        name: 'With a fallback', type: 'text_to_speech',
        parameters: { llm: { provider: 'anthropic', model: 'claude-haiku-4-5' }, fallbacks: { llm: [{ provider: 'openai_compatible', model: 'llama-3.3-70b' }] } },
      });
      assert.equal(strategy.status, 201, JSON.stringify(strategy.body));
      const assistant = await w.api('POST', `${tenant.orgPath}/assistants`, { name: 'Resilient', llmAudioContentGenerationStrategyId: strategy.body.data.id });
      return { tenant, assistantId: assistant.body.data.id };
    }

    async function open(org: { tenant: Tenant; assistantId: string }): Promise<{ id: string; client: CallClient }> {
      const started = await w.api('POST', `${org.tenant.orgPath}/assistants/${org.assistantId}/calls`, {});
      const client = await connect(started.body.data.websocketUrl);
      await client.next('call_started');
      return { id: started.body.data.id, client };
    }

    /** Says `text` and answers the reply; fails on any error frame before it. */
    async function ask(client: CallClient, text: string): Promise<string> {
      client.send({ type: 'user_message', text });
      const frame = await client.next((f) => f.type === 'assistant_message' || f.type === 'error', 10_000);
      assert.equal(frame.type, 'assistant_message', `the caller saw ${JSON.stringify(frame)}`);
      await client.next('turn_done');
      return frame.text;
    }

    it('an error answer: the fallback takes the turn unseen, the primary is skipped for the cool-down, then tried again', { timeout: 30_000 }, async () => {
      const org = await organization('Overloaded primary');
      anthropic.respond = () => ({ status: 529, errorMessage: 'Overloaded' });
      const { id, client } = await open(org);
      const asked = anthropic.requests.length;
      assert.equal(await ask(client, 'First question'), 'The fallback answers.');
      assert.equal(anthropic.requests.length, asked + 1, 'asked once: with a fallback behind it, no retry');
      // Within the cool-down the primary is passed over.
      assert.equal(await ask(client, 'Second question'), 'The fallback answers.');
      assert.equal(anthropic.requests.length, asked + 1);
      // After it, the primary is probed again, and serves now that it answers.
      clock.advance(COOL_DOWN_MS + 1);
      anthropic.respond = () => ({ text: 'Anthropic is back.' });
      assert.equal(await ask(client, 'Third question'), 'Anthropic is back.');
      client.send({ type: 'end' });
      await client.closed;
      const record = await callRecord({ ...w, tenant: org.tenant }, id);
      assert.equal(record.failure, null);
      assert.deepEqual(record.providers, {
        llm: 'anthropic',
        turns: [
          { turn: 1, llm: 'openai_compatible', failed: ['llm:anthropic'] },
          { turn: 2, llm: 'openai_compatible' },
          { turn: 3, llm: 'anthropic' },
        ],
      });
    });

    it('a refused connection and a first-token timeout are failures before any output: the fallback answers', { timeout: 30_000 }, async () => {
      const refused = await open(await organization('Unreachable primary', 'http://127.0.0.1:1'));
      assert.equal(await ask(refused.client, 'Anyone there?'), 'The fallback answers.');
      refused.client.send({ type: 'end' });

      const stalled = await organization('Stalled primary');
      anthropic.respond = () => ({ stall: 'before_first_token' });
      const asked = anthropic.requests.length;
      const { id, client } = await open(stalled);
      const started = performance.now();
      assert.equal(await ask(client, 'Hello?'), 'The fallback answers.');
      assert.ok(performance.now() - started < 5_000, 'within about the first-token limit (0.5 s), not after a retry');
      assert.equal(anthropic.requests.length, asked + 1);
      client.send({ type: 'end' });
      await client.closed;
      assert.deepEqual((await callRecord({ ...w, tenant: stalled.tenant }, id)).providers.turns, [{ turn: 1, llm: 'openai_compatible', failed: ['llm:anthropic'] }]);
    });

    it('a failure in the middle of an answer ends the call as before: the fallback does not say it again', { timeout: 30_000 }, async () => {
      const org = await organization('Cut mid-answer');
      anthropic.respond = () => ({ stall: 'after_first_token' });
      const fallbackAsked = compatible.requests.length;
      const { id, client } = await open(org);
      client.send({ type: 'user_message', text: 'Tell me everything' });
      assert.match((await client.next('error', 10_000)).message, /the stream stopped for 0\.5 s/);
      assert.equal((await client.next('call_ended')).reason, 'error');
      assert.equal(compatible.requests.length, fallbackAsked);
      const record = await callRecord({ ...w, tenant: org.tenant }, id);
      assert.deepEqual([record.failure.source, record.endReason], ['llm:anthropic', 'error']);
    });
  });
}
