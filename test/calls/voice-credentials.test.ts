import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { DIALECTS } from '../helpers/dialects.ts';
import { startElevenLabsFake, type ElevenLabsFake } from '../voice/fakes/elevenlabs.ts';
import { startFakeDeepgram, type FakeDeepgram } from '../voice/fakes/deepgram.ts';
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
        assert.deepEqual((await callRecord(w, call.body.data.id)).providers, { tts: 'elevenlabs', stt: 'deepgram' });
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
