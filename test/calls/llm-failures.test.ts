import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { callRecord, startWorld, type World } from './support/world.ts';

const STALL = { PARLEY_LLM_FIRST_TOKEN_SECONDS: '0.3', PARLEY_LLM_TOKEN_GAP_SECONDS: '0.3' };
const KEY = 'sk-proj-abcdefghij0123456789';

for (const dialect of DIALECTS) {
  describe(`calls: when the LLM fails or stalls (${dialect})`, () => {
    let w: World;
    let assistantId: string;
    before(async () => {
      w = await startWorld(dialect, STALL);
      assistantId = await w.createAssistant({ name: 'Fragile' });
    });
    after(() => w.close());

    /** Opens a call, says something, and waits for the call to end; answers the call record and the frames. */
    async function failingTurn() {
      const { id, client } = await w.open(assistantId);
      const before = w.llm.requests.length;
      client.send({ type: 'user_message', text: 'hello' });
      const error = await client.next('error', 10_000);
      assert.equal((await client.next('call_ended')).reason, 'error');
      await client.closed;
      return { record: await callRecord(w, id), error, requests: w.llm.requests.length - before };
    }

    it('names the cause in the error frame, the record and the log: status and provider message, never a key', async () => {
      w.llm.respond = () => ({ status: 401, errorMessage: `Incorrect API key provided: ${KEY}. You can find your API key at https://platform.openai.com/account/api-keys.` });
      const { record, error } = await failingTurn();
      assert.match(error.message, /HTTP 401: Incorrect API key provided/);
      assert.deepEqual([record.failure.source, record.failure.statusCode], ['llm', 401]);
      assert.match(record.failure.message, /^Incorrect API key provided: \[key\]/);
      assert.equal(record.conclusion.outcome, 'failed');
      for (const text of [error.message, JSON.stringify(record), w.logs()]) assert.ok(!text.includes(KEY), 'the key leaked');
      assert.match(w.logs(), /LLM request failed/);
    });

    it('a stream that never gives its first token is retried once, then the call ends naming the stall', async () => {
      w.llm.respond = () => ({ stall: 'before_first_token' });
      const { record, error, requests } = await failingTurn();
      assert.equal(requests, 2, 'asked once more before giving up');
      assert.equal(record.failure.message, 'no first token within 0.3 s');
      assert.match(error.message, /no first token within 0\.3 s/);
    });

    it('a stream that stops between tokens ends the call without a retry (the caller already heard the start)', async () => {
      w.llm.respond = () => ({ stall: 'after_first_token' });
      const { record, requests } = await failingTurn();
      assert.equal(requests, 1);
      assert.equal(record.failure.message, 'the stream stopped for 0.3 s');
    });
  });
}
