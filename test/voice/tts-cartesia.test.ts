// What is particular to this provider's protocol; what every provider must do (streaming, cutting a
// sentence or an utterance, errors without the key, cleanup) is in the conformance suite (tts-conformance.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { cartesiaTts, CARTESIA_VERSION } from '../../src/voice/tts/cartesia.ts';
import type { TtsOptions } from '../../src/voice/tts/types.ts';
import { startCartesiaFake, type CartesiaFake } from './fakes/cartesia.ts';
import { abortAfterFirstChunk, collect } from './support.ts';

const KEY = 'sk_car_test_0123456789';
const never = () => new AbortController().signal;

describe('Cartesia TTS against its fake', () => {
  let fake: CartesiaFake;
  let options: TtsOptions;
  before(async () => {
    fake = await startCartesiaFake({ apiKey: KEY, version: CARTESIA_VERSION, modelId: 'sonic-2', voiceId: 'voice-abc', sampleRate: 22050, generationConfig: { speed: 1.5 } });
    options = { apiKey: KEY, baseUrl: fake.url, voice: { voiceId: 'voice-abc', modelId: 'sonic-2', outputSampleRate: 22050, speed: 2 }, signal: never() };
  });
  after(() => fake.close());

  it('sends the documented request and yields exactly the audio the server sent, on one socket', async () => {
    const session = await cartesiaTts.open(options);
    const first = await collect(session.synthesize('Hello from Cartesia.', never()));
    const second = await collect(session.synthesize('Second sentence.', never()));
    await session.close();
    fake.violations.check();
    assert.deepEqual([...first.rates], [22050]);
    assert.deepEqual(first.pcm, fake.sent.at(-2)?.pcm);
    assert.deepEqual(second.pcm, fake.sent.at(-1)?.pcm);
    assert.equal(fake.handshakes.length, 1);
    assert.equal(fake.requests.at(-2)?.transcript, 'Hello from Cartesia.');
  });

  it('cancels the context when aborted mid-sentence, and the next sentence still works', async () => {
    const session = await cartesiaTts.open(options);
    fake.chunkIntervalMs = 10;
    const cut = await abortAfterFirstChunk((signal) => session.synthesize('This will be interrupted halfway through.', signal));
    fake.chunkIntervalMs = 2;
    assert.deepEqual(cut, { before: 1, after: 0 });
    const next = await collect(session.synthesize('Still working.', never()));
    assert.deepEqual(next.pcm, fake.sent.at(-1)?.pcm);
    assert.equal(fake.cancels.at(-1), fake.sent.at(-2)?.contextId);
    await session.close();
    fake.violations.check();
  });

});
