import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { elevenLabsTts } from '../../src/voice/tts/elevenlabs.ts';
import { TtsError, type TtsOptions } from '../../src/voice/tts/types.ts';
import { startElevenLabsFake, type ElevenLabsFake } from './fakes/elevenlabs.ts';
import { abortAfterFirstChunk, activeHandles, assertNoHandlesBeyond, collect } from './support.ts';

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

  it('stops at once when aborted mid-sentence, and the next sentence still works', async () => {
    const session = await elevenLabsTts.open(options);
    fake.chunkIntervalMs = 10;
    const cut = await abortAfterFirstChunk((signal) => session.synthesize('This sentence is cut off right after it starts.', signal));
    fake.chunkIntervalMs = 2;
    assert.deepEqual(cut, { before: 1, after: 0 });
    const next = await collect(session.synthesize('Still here.', never()));
    assert.deepEqual(next.pcm, fake.sent.at(-1)?.pcm);
    await session.close();
    fake.violations.check();
  });

  it('a refused key is a TtsError with the HTTP status and without the key', async () => {
    const wrongKey = 'xi-wrong-key-9876543210';
    await assert.rejects(elevenLabsTts.open({ ...options, apiKey: wrongKey }), (error: unknown) => {
      assert.ok(error instanceof TtsError);
      assert.equal(error.statusCode, 401);
      assert.equal(error.provider, 'elevenlabs');
      assert.ok(!error.message.includes(wrongKey));
      return true;
    });
  });

  it('a socket closed mid-sentence makes the iterator throw a TtsError', async () => {
    const session = await elevenLabsTts.open(options);
    fake.dropAfterChunks = 2;
    await assert.rejects(collect(session.synthesize('The connection drops in the middle of this.', never())), TtsError);
    // The session reconnects for the next sentence.
    const next = await collect(session.synthesize('Back again.', never()));
    assert.ok(next.pcm.length > 0);
    await session.close();
  });

  it('leaves no socket or timer open after close, and close is idempotent', async () => {
    const baseline = activeHandles();
    const session = await elevenLabsTts.open(options);
    await collect(session.synthesize('One more.', never()));
    await session.close();
    await session.close();
    await assertNoHandlesBeyond(baseline);
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
