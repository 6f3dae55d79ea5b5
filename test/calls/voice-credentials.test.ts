import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { DIALECTS } from '../helpers/dialects.ts';
import { startElevenLabsFake, type ElevenLabsFake } from '../voice/fakes/elevenlabs.ts';
import { startFakeDeepgram, type FakeDeepgram } from '../voice/fakes/deepgram.ts';
import { startOpenAiRealtimeFake, type OpenAiRealtimeFake } from '../voice/fakes/openai-realtime.ts';
import { connect } from './support/client.ts';
import { callRecord, startWorld, type World } from './support/world.ts';

const ORG_KEY = 'xi-organization-key-0123456789';
const DG_KEY = 'dg-platform-key-0123456789';
const AUDIO = { encoding: 'pcm_s16le', sampleRate: 16000 };

/** An assistant whose greeting is spoken by ElevenLabs, in a world whose platform has no ElevenLabs key. */
async function greeter(w: World): Promise<string> {
  const strategy = await w.api('POST', `${w.tenant.orgPath}/llm-generation-strategies`, {
    name: 'Own voice', type: 'text_to_speech',
    parameters: { model: 'test-model', outputSampleRate: 16000, voice: { provider: 'elevenlabs', voiceId: 'Rachel', modelId: 'eleven_flash_v2_5' }, transcriber: { provider: 'deepgram', model: 'nova-3', language: 'en' } },
  });
  assert.equal(strategy.status, 201, JSON.stringify(strategy.body));
  return w.createAssistant({ name: 'Greeter', systemPromptGreeting: 'Hello there.', llmAudioContentGenerationStrategyId: strategy.body.data.id });
}

async function addCredential(w: World, baseUrl: string): Promise<void> {
  const res = await w.api('POST', `${w.tenant.orgPath}/provider-credentials`, { provider: 'elevenlabs', apiKey: ORG_KEY, baseUrl });
  assert.equal(res.status, 201, JSON.stringify(res.body));
}

for (const dialect of DIALECTS) {
  describe(`voice calls with the organization's own provider credential (${dialect})`, () => {
    let tts: ElevenLabsFake;
    let stt: FakeDeepgram;
    before(async () => {
      tts = await startElevenLabsFake({ apiKey: ORG_KEY, voiceId: 'Rachel', modelId: 'eleven_flash_v2_5', outputFormat: 'pcm_16000' });
      stt = await startFakeDeepgram({ apiKey: DG_KEY, model: 'nova-3', language: 'en' });
    });
    after(async () => {
      await tts.close();
      await stt.close();
    });

    it('speaks with the organization\'s key at its base URL, where the egress policy allows that address', { timeout: 30_000 }, async () => {
      const w = await startWorld(dialect, { PARLEY_EGRESS_ALLOW: '127.0.0.0/8', DEEPGRAM_API_KEY: DG_KEY, DEEPGRAM_BASE_URL: stt.url });
      try {
        await addCredential(w, tts.url);
        const from = tts.handshakes.length;
        const call = await w.api('POST', `${w.tenant.orgPath}/assistants/${await greeter(w)}/calls`, { audio: AUDIO });
        const client = await connect(call.body.data.websocketUrl);
        await client.next('call_started');
        while (client.audio.length === 0) await sleep(20);
        assert.equal(tts.handshakes[from]?.headers['xi-api-key'], ORG_KEY);
        client.send({ type: 'end' });
        await client.closed;
        assert.deepEqual((await callRecord(w, call.body.data.id)).providers, { llm: 'openai', tts: 'elevenlabs', stt: 'deepgram', turns: [{ turn: 0, tts: 'elevenlabs' }] });
        assert.ok(!w.logs().includes(ORG_KEY), 'the key is never logged');
      } finally {
        await w.close();
      }
    });

    it('a base URL whose name resolves to a refused address fails the call at start, and nothing is sent there', { timeout: 30_000 }, async () => {
      // No address is allowed: `localhost` is a name, so it is accepted when written and judged when the call resolves it.
      const w = await startWorld(dialect, { PARLEY_EGRESS_ALLOW: '', DEEPGRAM_API_KEY: DG_KEY, DEEPGRAM_BASE_URL: stt.url });
      try {
        await addCredential(w, tts.url.replace('127.0.0.1', 'localhost'));
        const from = tts.handshakes.length;
        const call = await w.api('POST', `${w.tenant.orgPath}/assistants/${await greeter(w)}/calls`, { audio: AUDIO });
        const client = await connect(call.body.data.websocketUrl);
        const error = await client.next('error');
        assert.match(error.message, /egress to localhost refused by the egress policy/);
        assert.doesNotMatch(error.message, /127\.0\.0\.1|::1/, 'the resolved address is not the tenant\'s to learn');
        assert.equal((await client.next('call_ended')).reason, 'error');
        assert.equal(tts.handshakes.length, from, 'no connection reached the provider');
        assert.equal((await callRecord(w, call.body.data.id)).failure.source, 'tts:elevenlabs');
      } finally {
        await w.close();
      }
    });
  });
}

const ORG_OPENAI_KEY = 'sk-organization-realtime-0123456789';
// What a speech_to_speech strategy with no settings asks of the model: smart endpointing is the
// semantic VAD, as eager as the default maxSilence (1.6 s) allows; the server's defaults for the rest.
const PLAIN_SESSION = {
  type: 'realtime', model: 'gpt-realtime', instructions: 'Be brief.', output_modalities: ['audio'],
  audio: {
    input: { format: { type: 'audio/pcm', rate: 24000 }, transcription: { model: 'gpt-4o-mini-transcribe' }, turn_detection: { type: 'semantic_vad', eagerness: 'high', create_response: true, interrupt_response: true } },
    output: { format: { type: 'audio/pcm', rate: 24000 } },
  },
  tools: [], tool_choice: 'auto',
};

for (const dialect of DIALECTS) {
  describe(`speech_to_speech calls with the organization's own OpenAI credential (${dialect})`, () => {
    let realtime: OpenAiRealtimeFake;
    before(async () => {
      realtime = await startOpenAiRealtimeFake({ apiKey: ORG_OPENAI_KEY, model: 'gpt-realtime', session: PLAIN_SESSION, greeting: 'Hello there.' });
    });
    after(() => realtime.close());

    async function realtimeCall(w: World, baseUrl: string) {
      const res = await w.api('POST', `${w.tenant.orgPath}/provider-credentials`, { provider: 'openai', apiKey: ORG_OPENAI_KEY, baseUrl });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const strategy = await w.api('POST', `${w.tenant.orgPath}/llm-generation-strategies`, { name: 'Realtime', type: 'speech_to_speech', parameters: {} });
      assert.equal(strategy.status, 201, JSON.stringify(strategy.body));
      const assistantId = await w.createAssistant({ name: 'Talker', systemPrompt: 'Be brief.', systemPromptGreeting: 'Hello there.', llmAudioContentGenerationStrategyId: strategy.body.data.id });
      const call = await w.api('POST', `${w.tenant.orgPath}/assistants/${assistantId}/calls`, { audio: AUDIO });
      return { id: call.body.data.id as string, client: await connect(call.body.data.websocketUrl) };
    }

    it('the model is reached with the organization\'s key at its base URL, not the platform\'s', { timeout: 30_000 }, async () => {
      // The platform's OpenAI (the world's LLM) has another key and address: only the organization's credential reaches the fake.
      const w = await startWorld(dialect, { PARLEY_EGRESS_ALLOW: '127.0.0.0/8' });
      try {
        const from = realtime.handshakes.length;
        const { id, client } = await realtimeCall(w, realtime.url);
        assert.equal((await client.next('assistant_message', 15_000)).text, 'Hello there.');
        assert.equal(realtime.handshakes[from]?.headers.authorization, `Bearer ${ORG_OPENAI_KEY}`);
        client.send({ type: 'end' });
        await client.closed;
        realtime.violations.check();
        assert.deepEqual((await callRecord(w, id)).providers, { realtime: 'openai' });
        assert.ok(!w.logs().includes(ORG_OPENAI_KEY), 'the key is never logged');
      } finally {
        await w.close();
      }
    });

    it('a base URL whose name resolves to a refused address fails the call, naming realtime:openai, and nothing reaches it', { timeout: 30_000 }, async () => {
      const w = await startWorld(dialect, { PARLEY_EGRESS_ALLOW: '' });
      try {
        const from = realtime.handshakes.length;
        const { id, client } = await realtimeCall(w, realtime.url.replace('127.0.0.1', 'localhost'));
        const error = await client.next('error', 15_000);
        assert.match(error.message, /realtime:openai failed .*egress to localhost refused by the egress policy/);
        assert.doesNotMatch(error.message, /127\.0\.0\.1|::1/, 'the resolved address is not the tenant\'s to learn');
        assert.equal((await client.next('call_ended', 15_000)).reason, 'error');
        assert.equal(realtime.handshakes.length, from, 'no connection reached the model');
        assert.equal((await callRecord(w, id)).failure.source, 'realtime:openai');
      } finally {
        await w.close();
      }
    });
  });
}
