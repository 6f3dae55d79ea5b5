import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { until } from '../helpers/until.ts';
import { startFakeOpenAiStt, type FakeOpenAiStt } from '../voice/fakes/openai-stt.ts';
import { concatPcm } from '../voice/fakes/audio.ts';
import { silence, speech } from '../voice/support/speech.ts';
import { connect, talk } from './support/client.ts';
import { startReceiver, type Receiver } from './support/receiver.ts';
import { callRecord, startWorld, type World } from './support/world.ts';

const ORDER_TOOL = {
  type: 'tool_webhook',
  parameters: {
    name: 'lookup_order',
    schema: JSON.stringify({
      name: 'lookup_order', description: 'Find an order by its number',
      parameters: { type: 'object', properties: { orderNumber: { type: 'string' }, quantity: { type: 'integer' } }, required: ['orderNumber'] },
    }),
  },
};

/** No LLM configured at all: the world's platform variables are emptied, so calls get the built-in demo model. */
const NO_LLM = { OPENAI_BASE_URL: '', OPENAI_API_KEY: '' };

for (const dialect of DIALECTS) {
  describe(`the built-in demo model, when no LLM is configured (${dialect})`, () => {
    let w: World;
    let receiver: Receiver;
    let assistantId: string;
    before(async () => {
      w = await startWorld(dialect, NO_LLM);
      receiver = await startReceiver();
      receiver.answer = () => ({ body: '{"order":"A-17","status":"shipped","arrives":"tomorrow"}', contentType: 'application/json' });
      assistantId = await w.createAssistant({
        name: 'Front desk', systemPrompt: 'Answer questions about orders.',
        extensions: [{ ...ORDER_TOOL, parameters: { ...ORDER_TOOL.parameters, serverUrl: receiver.url } }, { type: 'end_call', parameters: {} }],
      });
    });
    after(async () => {
      await w.close();
      await receiver.close();
    });

    it('calls the tool with the caller\'s words, reads the result back, says once that it is a demo, and hangs up on goodbye', { timeout: 30_000 }, async () => {
      const { id, client } = await w.open(assistantId);
      client.send({ type: 'user_message', text: 'Hello there' });
      const hello = (await client.next('assistant_message', 10_000)).text as string;
      assert.match(hello, /^Hello! I can use lookup_order \(Find an order by its number\)/);
      assert.match(hello, /built-in demo model.*OPENAI_BASE_URL/);

      client.send({ type: 'user_message', text: 'Where is my order A-17? I ordered 3.' });
      const answer = (await client.next('assistant_message', 10_000)).text as string;
      assert.equal(answer, 'lookup_order answered: order A-17, status shipped, arrives tomorrow.', 'read back, and the demo notice is not said twice');
      assert.equal(receiver.requests.length, 1);
      assert.equal(receiver.requests[0]?.body.name, 'lookup_order');
      assert.deepEqual(receiver.requests[0]?.body.parameters, { orderNumber: 'A-17', quantity: 3 });

      client.send({ type: 'user_message', text: 'Thanks, goodbye' });
      assert.equal((await client.next('call_ended', 10_000)).reason, 'assistant_ended');
      await client.closed;
      const record = await callRecord(w, id);
      assert.equal(record.providers.llm, 'demo');
      assert.deepEqual(record.toolInvocations.map((t: { name: string }) => t.name), ['lookup_order', 'end_call']);
      assert.equal(w.llm.requests.length, 0, 'nothing reached an LLM server');
    });

    it('a voice call with no speech to text is refused at start, naming the options', { timeout: 30_000 }, async () => {
      // A strategy that names no voice and no transcriber: eSpeak would speak, nothing could listen.
      const strategy = await w.api('POST', `${w.tenant.orgPath}/llm-generation-strategies`, { name: 'Plain', type: 'text_to_speech', parameters: {} });
      const voiceAssistant = await w.createAssistant({ name: 'Plain voice', llmAudioContentGenerationStrategyId: strategy.body.data.id });
      const call = await w.api('POST', `${w.tenant.orgPath}/assistants/${voiceAssistant}/calls`, { audio: { encoding: 'pcm_s16le', sampleRate: 16000 } });
      assert.equal(call.status, 201, JSON.stringify(call.body));
      const client = await connect(call.body.data.websocketUrl);
      const error = await client.next('error', 10_000);
      assert.match(error.message, /no speech to text.*DEEPGRAM_API_KEY.*OPENAI_API_KEY.*Whisper-compatible server/);
      assert.equal((await client.next('call_ended', 10_000)).reason, 'error');
      assert.equal((await callRecord(w, call.body.data.id)).failure.source, 'stt');
    });
  });

  describe(`a strategy naming the demo model while a real LLM is configured (${dialect})`, () => {
    it('answers from the demo, and the platform LLM is not asked', { timeout: 30_000 }, async () => {
      const w = await startWorld(dialect);
      try {
        const strategy = await w.api('POST', `${w.tenant.orgPath}/llm-generation-strategies`, { name: 'Demo', type: 'text_to_speech', parameters: { llm: { provider: 'demo', model: 'rules' } } });
        assert.equal(strategy.status, 201, JSON.stringify(strategy.body));
        const assistantId = await w.createAssistant({ name: 'Demo', llmAudioContentGenerationStrategyId: strategy.body.data.id });
        const { id, client } = await w.open(assistantId);
        client.send({ type: 'user_message', text: 'What can you do?' });
        assert.match((await client.next('assistant_message', 10_000)).text, /^You said: "What can you do\?"\. I am Parley's built-in demo model/);
        client.send({ type: 'end' });
        await client.closed;
        assert.equal((await callRecord(w, id)).providers.llm, 'demo');
        assert.equal(w.llm.requests.length, 0);
      } finally {
        await w.close();
      }
    });
  });

  describe(`a voice call heard by a keyless Whisper server, answered by the demo model (${dialect})`, () => {
    let whisper: FakeOpenAiStt;
    let receiver: Receiver;
    before(async () => {
      // A self-hosted server that takes no key: the fake refuses any Authorization header.
      whisper = await startFakeOpenAiStt({ apiKey: null, model: 'Systran/faster-whisper-small' });
      receiver = await startReceiver();
      receiver.answer = () => ({ body: '{"order":"A-17","status":"shipped"}', contentType: 'application/json' });
    });
    after(async () => {
      await whisper.close();
      await receiver.close();
    });

    it('a strategy naming no transcriber listens through WHISPER_BASE_URL, and the demo calls the tool with what was heard', { timeout: 90_000 }, async () => {
      const w = await startWorld(dialect, { ...NO_LLM, WHISPER_BASE_URL: whisper.url });
      try {
        const strategy = await w.api('POST', `${w.tenant.orgPath}/llm-generation-strategies`, { name: 'Plain', type: 'text_to_speech', parameters: { vad: { stopDuration: 0.6 } } });
        assert.equal(strategy.status, 201, JSON.stringify(strategy.body));
        const voiceAssistant = await w.createAssistant({
          name: 'Voice desk', systemPromptGreeting: 'Hello.', llmAudioContentGenerationStrategyId: strategy.body.data.id,
          extensions: [{ ...ORDER_TOOL, parameters: { ...ORDER_TOOL.parameters, serverUrl: receiver.url } }],
        });
        const call = await w.api('POST', `${w.tenant.orgPath}/assistants/${voiceAssistant}/calls`, { audio: { encoding: 'pcm_s16le', sampleRate: 16000 } });
        assert.equal(call.status, 201, JSON.stringify(call.body));
        const client = await connect(call.body.data.websocketUrl);
        await client.next('call_started', 15_000);
        // The caller speaks once the greeting (eSpeak's) has played.
        await until('the greeting played', () => callRecord(w, call.body.data.id), (r) => r.transcript.length > 0, 30_000);
        whisper.setTranscript('Where is my order A-17?');
        await talk(client, concatPcm([silence(0.4), await speech('Where is my order A-17?'), silence(1.2)]));
        assert.equal((await client.next((f) => f.type === 'user_transcript' && f.final, 30_000)).text, 'Where is my order A-17?');
        assert.match((await client.next('assistant_message', 30_000)).text, /^lookup_order answered: order A-17, status shipped\. I am Parley's built-in demo model/);
        assert.deepEqual(receiver.requests.at(-1)?.body.parameters, { orderNumber: 'A-17' });
        assert.ok(whisper.requests.length > 0 && whisper.requests.every((r) => r.authorization === undefined), 'no key is sent');
        assert.deepEqual(whisper.problems, []);
        client.send({ type: 'end' });
        await client.closed;
        const record = await callRecord(w, call.body.data.id);
        assert.equal(record.providers.stt, 'whisper');
        assert.equal(record.providers.llm, 'demo');
      } finally {
        await w.close();
      }
    });
  });
}
