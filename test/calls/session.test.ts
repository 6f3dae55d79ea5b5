import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.ts';
import { createVoiceKit } from '../../src/calls/voice/kit.ts';
import { ManualPacerClock } from '../../src/voice/pacer-clock.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { callRecord, startWorld, type World } from './support/world.ts';

for (const dialect of DIALECTS) {
  describe(`calls: the session (${dialect})`, () => {
    let w: World;
    let assistantId: string;
    const clock = new ManualClock('2026-03-02T10:00:00.000Z');
    before(async () => {
      w = await startWorld(dialect, {}, { clock });
      assistantId = await w.createAssistant({
        name: 'Front desk',
        systemPrompt: 'You help {{firstName}} (customer {{ customer }}) with {{unknown}}.',
        systemPromptGreeting: 'Hi {{firstName}}, you have {{count}} orders. {{missing}}',
      });
    });
    after(() => w.close());

    it('sends the API key to the LLM, and no Authorization header when none is configured', async () => {
      const keyless = await startWorld(dialect, { OPENAI_API_KEY: '' });
      try {
        const { client } = await keyless.open(await keyless.createAssistant({ name: 'A' }));
        client.send({ type: 'user_message', text: 'hi' });
        await client.next('assistant_message');
        assert.equal(keyless.llm.headers[0]?.authorization, undefined);
        client.close();
      } finally {
        await keyless.close();
      }
    });

    it('greets first with placeholders filled, then streams each answer and sends it whole', async () => {
      const { id, client } = await w.open(assistantId, { firstName: 'Ada', count: 3, customer: { tier: 'gold' } });
      assert.deepEqual(client.frames[0], { type: 'call_started', callId: id, unfilledPlaceholders: ['unknown', 'missing'], greeting: true });
      assert.deepEqual(await client.next(() => true), { type: 'assistant_message', text: 'Hi Ada, you have 3 orders. {{missing}}' });
      const before = w.llm.requests.length;
      w.llm.respond = () => ({ text: 'Your order ships today.' });
      client.send({ type: 'user_message', text: 'Where is my order?' });
      const answer = await client.next('assistant_message');
      assert.equal(answer.text, 'Your order ships today.');
      const deltas = client.frames.filter((f) => f.type === 'assistant_delta').map((f) => f.text);
      assert.ok(deltas.length > 1, 'streamed in several deltas');
      assert.equal(deltas.join(''), 'Your order ships today.');
      const request = w.llm.requests[before];
      assert.equal(request.model, 'test-model');
      assert.equal(request.temperature, 0.3);
      assert.equal(request.stream, true);
      assert.equal(w.llm.headers[before]?.authorization, 'Bearer test');
      assert.equal(request.tools, undefined, 'no tools configured: none sent');
      assert.deepEqual(request.messages, [
        { role: 'system', content: 'You help Ada (customer {"tier":"gold"}) with {{unknown}}.' },
        { role: 'assistant', content: 'Hi Ada, you have 3 orders. {{missing}}' },
        { role: 'user', content: 'Where is my order?' },
      ]);
      client.send({ type: 'end' });
      assert.deepEqual(await client.next('call_ended'), { type: 'call_ended', reason: 'client_ended' });
      assert.equal((await client.closed).code, 1000);
      const call = await callRecord(w, id);
      assert.equal(call.status, 'ended');
      assert.equal(call.endReason, 'client_ended');
      assert.deepEqual(call.transcript.map((e: any) => [e.role, e.text]), [
        ['assistant', 'Hi Ada, you have 3 orders. {{missing}}'],
        ['user', 'Where is my order?'],
        ['assistant', 'Your order ships today.'],
      ]);
      assert.equal(call.conclusion.outcome, 'completed');
      assert.equal(call.conclusion.id, call.conclusionId);
      assert.equal(call.startedAt, clock.now().toISOString());
      const conclusion = await w.t.db.kysely.selectFrom('conclusions').selectAll().where('id', '=', call.conclusionId).executeTakeFirstOrThrow();
      assert.equal(conclusion.call_id, id);
    });

    it('fills a placeholder with its default when the call has no value, and with the value when it has one', async () => {
      const withDefaults = await w.createAssistant({
        name: 'Defaults',
        systemPrompt: 'Call the customer {{ firstName | there }}.',
        systemPromptGreeting: 'Hello {{firstName|there}}, welcome to {{company|our shop}}!',
      });
      const bare = await w.open(withDefaults);
      assert.deepEqual(bare.client.frames[0], { type: 'call_started', callId: bare.id, greeting: true });
      assert.deepEqual(await bare.client.next(() => true), { type: 'assistant_message', text: 'Hello there, welcome to our shop!' });
      w.llm.respond = () => ({ text: 'Sure.' });
      const before = w.llm.requests.length;
      bare.client.send({ type: 'user_message', text: 'hi' });
      await bare.client.next('assistant_message');
      assert.equal(w.llm.requests[before].messages[0].content, 'Call the customer there.');
      bare.client.send({ type: 'end' });
      await bare.client.closed;

      const named = await w.open(withDefaults, { firstName: 'Ada' });
      assert.deepEqual(await named.client.next(() => true), { type: 'assistant_message', text: 'Hello Ada, welcome to our shop!' });
      named.client.send({ type: 'end' });
      await named.client.closed;
      const call = await callRecord(w, bare.id);
      assert.deepEqual(call.unfilledPlaceholders, []);
    });

    it('answers bad frames with an error frame and goes on', async () => {
      const { client } = await w.open(assistantId);
      client.sendRaw('not json');
      assert.equal((await client.next('error')).message, 'Frames must be JSON text');
      client.send({ type: 'dance' });
      assert.match((await client.next('error')).message, /Unknown frame type/);
      client.send({ type: 'user_message', text: '' });
      assert.match((await client.next('error')).message, /non-empty/);
      client.send({ type: 'user_message', text: 'hi', extra: 1 });
      assert.match((await client.next('error')).message, /Unknown field "extra"/);
      w.llm.respond = () => ({ text: 'Still here.' });
      client.send({ type: 'user_message', text: 'hello?' });
      assert.equal((await client.next('assistant_message')).text, 'Still here.');
      client.close();
      await client.closed;
    });
  });

  describe(`calls: limits and failures (${dialect})`, () => {
    let w: World;
    let assistantId: string;
    // The session's idle and total limits run on the voice kit's clock: moved by hand here.
    const clock = new ManualPacerClock();
    before(async () => {
      w = await startWorld(dialect, { PARLEY_CALL_IDLE_SECONDS: '60', PARLEY_CALL_MAX_SECONDS: '150' }, { voice: createVoiceKit({ pacerClock: clock }) });
      assistantId = await w.createAssistant({ name: 'Limits', systemPromptGreeting: 'Hello.' });
    });
    after(() => w.close());

    it('ends an idle call, and a call that runs too long', async () => {
      const idle = await w.open(assistantId);
      clock.advance(59_000);
      w.llm.respond = () => ({ text: 'Still here.' });
      idle.client.send({ type: 'user_message', text: 'hello?' });
      await idle.client.next((f) => f.type === 'assistant_message' && f.text === 'Still here.');
      await idle.client.next('turn_done');
      clock.advance(60_000);
      assert.equal((await idle.client.next('call_ended')).reason, 'idle_timeout');
      assert.equal((await callRecord(w, idle.id)).endReason, 'idle_timeout');

      const silent = await w.open(assistantId);
      clock.advance(60_000);
      assert.equal((await silent.client.next('call_ended')).reason, 'idle_timeout');
      assert.equal((await callRecord(w, silent.id)).conclusion.outcome, 'abandoned', 'the user never spoke');

      const long = await w.open(assistantId);
      for (let i = 0; i < 3; i++) {
        clock.advance(45_000);
        long.client.send({ type: 'user_message', text: 'still there' });
        await long.client.next('turn_done');
      }
      clock.advance(16_000);
      assert.equal((await long.client.next('call_ended')).reason, 'max_duration');
      const record = await callRecord(w, long.id);
      assert.equal(record.endReason, 'max_duration');
      assert.equal(record.conclusion.outcome, 'completed');
    });

    it('ends the call as failed when the LLM does not answer', async () => {
      w.llm.respond = () => ({ status: 400 });
      const { id, client } = await w.open(assistantId);
      client.send({ type: 'user_message', text: 'hello' });
      assert.match((await client.next('error')).message, /language model/);
      assert.equal((await client.next('call_ended')).reason, 'error');
      const record = await callRecord(w, id);
      assert.equal(record.conclusion.outcome, 'failed');
    });

    it('an end frame while the LLM is still thinking ends the call at once', async () => {
      let answered!: () => void;
      w.llm.respond = () => new Promise((resolve) => (answered = () => resolve({ text: 'Too late.' })));
      const { id, client } = await w.open(assistantId);
      const asked = w.llm.requests.length;
      client.send({ type: 'user_message', text: 'think hard' });
      for (let i = 0; i < 100 && w.llm.requests.length === asked; i++) await new Promise((r) => setTimeout(r, 10));
      client.send({ type: 'end' });
      assert.equal((await client.next('call_ended', 2000)).reason, 'client_ended');
      answered();
      assert.ok(!client.frames.some((f) => f.type === 'assistant_message' && f.text === 'Too late.'));
      assert.equal((await callRecord(w, id)).conclusion.outcome, 'completed');
    });

    it('a client that disconnects ends the call', async () => {
      w.llm.respond = () => ({ text: 'Hi.' });
      const { id, client } = await w.open(assistantId);
      client.send({ type: 'user_message', text: 'hello' });
      await client.next('assistant_message', 3000);
      await client.next('assistant_message', 3000);
      client.close();
      await client.closed;
      for (let i = 0; i < 50; i++) {
        if ((await callRecord(w, id)).status === 'ended') break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const record = await callRecord(w, id);
      assert.equal(record.endReason, 'client_disconnected');
      assert.equal(record.conclusion.outcome, 'completed');
    });

    it('ends live calls as server_shutdown when the app closes', async () => {
      const { id, client } = await w.open(assistantId);
      const closing = w.t.app.close();
      assert.equal((await client.next('call_ended')).reason, 'server_shutdown');
      await closing;
      const row = await w.t.db.kysely.selectFrom('calls').select(['status', 'end_reason']).where('id', '=', id).executeTakeFirstOrThrow();
      assert.deepEqual(row, { status: 'ended', end_reason: 'server_shutdown' });
    });
  });
}
