// What is particular to this provider's protocol; what every provider must do (streaming, cutting a
// sentence or an utterance, errors without the key, cleanup) is in the conformance suite (tts-conformance.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { elevenLabsTts } from '../../src/voice/tts/elevenlabs.ts';
import type { TtsOptions } from '../../src/voice/tts/types.ts';
import { startElevenLabsFake, type ElevenLabsFake } from './fakes/elevenlabs.ts';
import { collect } from './support.ts';

const KEY = 'xi-test-key-0123456789';
const never = () => new AbortController().signal;

describe('ElevenLabs TTS against its fake', () => {
  let fake: ElevenLabsFake;
  let options: TtsOptions;
  before(async () => {
    fake = await startElevenLabsFake({
      apiKey: KEY,
      voiceId: 'voice-123',
      modelId: 'eleven_turbo_v2_5',
      outputFormat: 'pcm_16000',
      voiceSettings: { stability: 0.4, similarity_boost: 0.8, style: 0.1, use_speaker_boost: true, speed: 1.1 },
    });
    options = {
      apiKey: KEY,
      baseUrl: fake.url,
      voice: { voiceId: 'voice-123', modelId: 'eleven_turbo_v2_5', outputSampleRate: 16000, stability: 0.4, similarityBoost: 0.8, style: 0.1, useSpeakerBoost: true, speed: 1.1 },
      signal: never(),
    };
  });
  after(() => fake.close());

  it('sends the documented fields and yields exactly the audio the server sent, sentence after sentence on one socket', async () => {
    const session = await elevenLabsTts.open(options);
    const first = await collect(session.synthesize('Hello from the fake server.', never()));
    const second = await collect(session.synthesize('A second sentence.', never()));
    await session.close();
    fake.violations.check();
    const [sentFirst, sentSecond] = fake.sent.slice(-2);
    assert.deepEqual([...first.rates], [16000]);
    assert.deepEqual(first.pcm, sentFirst?.pcm);
    assert.deepEqual(second.pcm, sentSecond?.pcm);
    assert.equal(sentFirst?.text, 'Hello from the fake server.');
    assert.ok(first.pcm.length > 16000 * 0.8, 'about a second and more of speech');
    const handshake = fake.handshakes.at(-1);
    assert.equal(handshake?.query.auto_mode, 'true');
    assert.equal(fake.handshakes.length, 1, 'one connection for both sentences');
    assert.notEqual(sentFirst?.contextId, sentSecond?.contextId);
  });

  it('sends no voice_settings when the strategy sets none, and uses the defaults', async () => {
    const plain = await startElevenLabsFake({ apiKey: KEY, voiceId: '21m00Tcm4TlvDq8ikWAM', modelId: 'eleven_flash_v2_5', outputFormat: 'pcm_24000' });
    try {
      const session = await elevenLabsTts.open({ apiKey: KEY, baseUrl: plain.url.replace('ws://', 'http://'), voice: {}, signal: never() });
      const audio = await collect(session.synthesize('Defaults.', never()));
      await session.close();
      plain.violations.check();
      assert.deepEqual([...audio.rates], [24000]);
      assert.deepEqual(audio.pcm, plain.sent[0]?.pcm);
    } finally {
      await plain.close();
    }
  });
});
