// Speech fallbacks in voice calls: a transcriber that fails to open or dies is replaced by the
// next, which hears the caller's utterance again, so the words reach the LLM; a voice that
// cannot start a sentence (refused, failed) is replaced by the next, which speaks that sentence.
// The caller sees no error and the record names who served each turn. Fake Deepgram, OpenAI
// transcription, ElevenLabs and Cartesia servers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DIALECTS } from '../helpers/dialects.ts';
import { createTenant, type Tenant } from '../helpers/app.ts';
import { until } from '../helpers/until.ts';
import { startCartesiaFake, type CartesiaFake } from '../voice/fakes/cartesia.ts';
import { startFakeDeepgram, type FakeDeepgram } from '../voice/fakes/deepgram.ts';
import { startElevenLabsFake, type ElevenLabsFake } from '../voice/fakes/elevenlabs.ts';
import { startFakeOpenAiStt, type FakeOpenAiStt } from '../voice/fakes/openai-stt.ts';
import { concatPcm } from '../voice/fakes/audio.ts';
import { similarity } from '../voice/support/compare.ts';
import { silence, speech } from '../voice/support/speech.ts';
import { connect, talk, type CallClient } from './support/client.ts';
import { callRecord, startWorld, type World } from './support/world.ts';

const DG_KEY = 'dg-fallback-key-0123456789';
const XI_KEY = 'xi-fallback-key-0123456789';
const CARTESIA_KEY = 'sk_car_fallback_0123456789';
const STT_KEY = 'sk-fallback-stt-0123456789';
const RATE = 16000;
const GREETING = 'Hello, this is the front desk.';
const QUESTION = 'When do you open tomorrow?';

const samplesOf = (client: CallClient) => {
  const all = Buffer.concat(client.audio.map((c) => c.bytes));
  return new Int16Array(all.buffer, all.byteOffset, Math.floor(all.length / 2));
};

for (const dialect of DIALECTS) {
  describe(`speech fallbacks in voice calls (${dialect})`, () => {
    let w: World;
    let deepgram: FakeDeepgram;
    let whisper: FakeOpenAiStt;
    let elevenlabs: ElevenLabsFake;
    let cartesia: CartesiaFake;
    let question: Int16Array;
    before(async () => {
      deepgram = await startFakeDeepgram({ apiKey: DG_KEY, model: 'nova-3', language: 'en' });
      whisper = await startFakeOpenAiStt({ apiKey: STT_KEY, model: 'gpt-4o-mini-transcribe', language: 'en' });
      elevenlabs = await startElevenLabsFake({ apiKey: XI_KEY, voiceId: 'Rachel', modelId: 'eleven_flash_v2_5', outputFormat: 'pcm_16000' });
      cartesia = await startCartesiaFake({ apiKey: CARTESIA_KEY, version: '2025-04-16', modelId: 'sonic-3', voiceId: 'voice-fallback', sampleRate: RATE });
      w = await startWorld(dialect, {
        DEEPGRAM_API_KEY: DG_KEY, DEEPGRAM_BASE_URL: deepgram.url, ELEVENLABS_API_KEY: XI_KEY, ELEVENLABS_BASE_URL: elevenlabs.url,
        CARTESIA_API_KEY: CARTESIA_KEY, CARTESIA_BASE_URL: cartesia.url,
      });
      question = concatPcm([silence(0.4), await speech(QUESTION), silence(1.2)]);
    });
    after(async () => {
      await w.close();
      await Promise.all([deepgram.close(), whisper.close(), elevenlabs.close(), cartesia.close()]);
    });

    /** An organization with the fallback transcriber's credential (and `credentials` more), and an assistant whose strategy has `parameters`. */
    async function organization(name: string, parameters: Record<string, unknown>, credentials: Record<string, unknown>[] = []) {
      const tenant = await createTenant(w.t, name);
      for (const body of [{ provider: 'openai', apiKey: STT_KEY, baseUrl: whisper.url }, ...credentials]) {
        const stored = await w.api('POST', `${tenant.orgPath}/provider-credentials`, body);
        assert.equal(stored.status, 201, JSON.stringify(stored.body));
      }
      const strategy = await w.api('POST', `${tenant.orgPath}/llm-generation-strategies`, { name: 'Voice with fallbacks', type: 'text_to_speech', parameters: { model: 'test-model', outputSampleRate: RATE, vad: { stopDuration: 0.6 }, ...parameters } });
      assert.equal(strategy.status, 201, JSON.stringify(strategy.body));
      const assistant = await w.api('POST', `${tenant.orgPath}/assistants`, { name: 'Front desk', systemPromptGreeting: GREETING, llmAudioContentGenerationStrategyId: strategy.body.data.id });
      return { tenant, assistantId: assistant.body.data.id as string };
    }

    async function open(org: { tenant: Tenant; assistantId: string }) {
      const started = await w.api('POST', `${org.tenant.orgPath}/assistants/${org.assistantId}/calls`, { audio: { encoding: 'pcm_s16le', sampleRate: RATE } });
      assert.equal(started.status, 201, JSON.stringify(started.body));
      const client = await connect(started.body.data.websocketUrl);
      await client.next('call_started');
      return { id: started.body.data.id as string, client };
    }

    const listening = { voice: { provider: 'espeak' }, transcriber: { provider: 'deepgram', model: 'nova-3', language: 'en' }, fallbacks: { stt: [{ provider: 'openai', model: 'gpt-4o-mini-transcribe', language: 'en' }] } };

    it('a transcriber that dies mid-call: the next one hears the utterance again and the caller\'s words reach the LLM', { timeout: 60_000 }, async () => {
      const org = await organization('STT dies', listening);
      whisper.setTranscript(QUESTION);
      w.llm.respond = () => ({ text: 'We open at nine.' });
      const { id, client } = await open(org);
      await until('the greeting played', () => callRecord({ ...w, tenant: org.tenant }, id), (r) => r.transcript.length > 0, 20_000);
      const heardBefore = whisper.receivedAudio().length;
      deepgram.closeConnections(1011, 'NET-0000');
      await talk(client, question);
      const said = await client.next((f) => (f.type === 'user_transcript' && f.final) || f.type === 'error', 20_000);
      assert.deepEqual([said.type, said.text], ['user_transcript', QUESTION]);
      await client.next('assistant_message', 20_000);
      // The fallback heard the whole utterance: the speech of the question, as the caller said it.
      const heard = whisper.receivedAudio().subarray(heardBefore);
      assert.ok(heard.length >= (await speech(QUESTION)).length, `the utterance was heard again whole (${heard.length} samples)`);
      assert.ok(similarity(await speech(QUESTION), heard, 8000).ncc >= 0.9);
      client.send({ type: 'end' });
      await client.closed;
      assert.ok(!client.frames.some((f) => f.type === 'error'), 'no error frame');
      const record = await callRecord({ ...w, tenant: org.tenant }, id);
      assert.equal(record.failure, null);
      assert.deepEqual(record.providers.turns.find((t: any) => t.turn === 1), { turn: 1, stt: 'openai', llm: 'openai', tts: 'espeak', failed: ['stt:deepgram'] });
    });

    it('a transcriber that fails to open: the next one listens from the start', { timeout: 60_000 }, async () => {
      const org = await organization('STT refused', listening, [{ provider: 'deepgram', apiKey: 'dg-wrong-key-0000000000', baseUrl: deepgram.url }]);
      whisper.setTranscript(QUESTION);
      w.llm.respond = () => ({ text: 'Nine sharp.' });
      const { id, client } = await open(org);
      await until('the greeting played', () => callRecord({ ...w, tenant: org.tenant }, id), (r) => r.transcript.length > 0, 20_000);
      await talk(client, question);
      assert.equal((await client.next((f) => f.type === 'user_transcript' && f.final, 20_000)).text, QUESTION);
      await client.next('assistant_message', 20_000);
      client.send({ type: 'end' });
      await client.closed;
      assert.ok(!client.frames.some((f) => f.type === 'error'));
      const record = await callRecord({ ...w, tenant: org.tenant }, id);
      assert.deepEqual(record.providers.turns.find((t: any) => t.turn === 1)?.failed, ['stt:deepgram']);
    });

    const speaking = {
      voice: { provider: 'elevenlabs', voiceId: 'Rachel', modelId: 'eleven_flash_v2_5' },
      transcriber: { provider: 'deepgram', model: 'nova-3', language: 'en' },
      fallbacks: { tts: [{ provider: 'cartesia', voiceId: 'voice-fallback', modelId: 'sonic-3' }] },
    };

    it('a voice that fails a sentence before its audio: the next voice speaks that sentence, and the caller hears it', { timeout: 60_000 }, async () => {
      const org = await organization('TTS fails', speaking);
      elevenlabs.failNext = 'This request exceeds your quota of 10000. You have 0 credits remaining.';
      const spokenBefore = cartesia.sent.length;
      const { id, client } = await open(org);
      await until('the greeting played', () => callRecord({ ...w, tenant: org.tenant }, id), (r) => r.transcript.length > 0, 20_000);
      const greeting = cartesia.sent[spokenBefore];
      assert.equal(greeting?.transcript, GREETING);
      await until('the greeting heard', async () => samplesOf(client).length, (n) => n >= greeting.pcm.length, 5_000);
      assert.ok(similarity(greeting.pcm, samplesOf(client).subarray(0, greeting.pcm.length + 320), 64).ncc >= 0.9, 'the caller heard the fallback voice');
      client.send({ type: 'end' });
      await client.closed;
      assert.ok(!client.frames.some((f) => f.type === 'error'));
      const record = await callRecord({ ...w, tenant: org.tenant }, id);
      assert.equal(record.failure, null);
      assert.deepEqual(record.providers.turns, [{ turn: 0, tts: 'cartesia', failed: ['tts:elevenlabs'] }]);
    });

    it('a voice that gives no audio within 5 s: the next voice speaks that sentence', { timeout: 60_000 }, async () => {
      const org = await organization('TTS slow', speaking);
      elevenlabs.firstChunkDelayMs = 20_000; // far past TTS_FIRST_AUDIO_MS, so the first voice has not begun when the fallback takes over
      try {
        const spokenBefore = cartesia.sent.length;
        const { id, client } = await open(org);
        await until('the greeting played', () => callRecord({ ...w, tenant: org.tenant }, id), (r) => r.transcript.length > 0, 30_000);
        assert.equal(cartesia.sent[spokenBefore]?.transcript, GREETING);
        client.send({ type: 'end' });
        await client.closed;
        assert.ok(!client.frames.some((f) => f.type === 'error'));
        const record = await callRecord({ ...w, tenant: org.tenant }, id);
        assert.equal(record.failure, null);
        assert.deepEqual(record.providers.turns, [{ turn: 0, tts: 'cartesia', failed: ['tts:elevenlabs'] }]);
      } finally {
        elevenlabs.firstChunkDelayMs = 0;
      }
    });

    it('a voice whose server is unreachable at the start: the next voice opens and speaks', { timeout: 60_000 }, async () => {
      const org = await organization('TTS unreachable', speaking, [{ provider: 'elevenlabs', apiKey: XI_KEY, baseUrl: 'ws://127.0.0.1:1' }]);
      const spokenBefore = cartesia.sent.length;
      const { id, client } = await open(org);
      await until('the greeting played', () => callRecord({ ...w, tenant: org.tenant }, id), (r) => r.transcript.length > 0, 20_000);
      assert.equal(cartesia.sent[spokenBefore]?.transcript, GREETING);
      client.send({ type: 'end' });
      await client.closed;
      assert.ok(!client.frames.some((f) => f.type === 'error'));
      assert.deepEqual((await callRecord({ ...w, tenant: org.tenant }, id)).providers.turns, [{ turn: 0, tts: 'cartesia', failed: ['tts:elevenlabs'] }]);
    });
  });
}
