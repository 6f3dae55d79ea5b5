import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { cartesiaTts, CARTESIA_VERSION } from '../../src/voice/tts/cartesia.ts';
import { TtsError, type TtsOptions } from '../../src/voice/tts/types.ts';
import { startCartesiaFake, type CartesiaFake } from './fakes/cartesia.ts';
import { abortAfterFirstChunk, activeHandles, assertNoHandlesBeyond, collect } from './support.ts';

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

  it('a refused key is a TtsError with the HTTP status', async () => {
    await assert.rejects(cartesiaTts.open({ ...options, apiKey: 'sk_car_wrong_key_123' }), (error: unknown) => {
      assert.ok(error instanceof TtsError);
      assert.equal(error.statusCode, 401);
      assert.ok(!error.message.includes('sk_car_wrong_key_123'));
      return true;
    });
  });

  it('a socket closed mid-sentence makes the iterator throw a TtsError', async () => {
    const session = await cartesiaTts.open(options);
    fake.dropAfterChunks = 1;
    await assert.rejects(collect(session.synthesize('Dropped in the middle of this sentence.', never())), TtsError);
    await session.close();
  });

  it('a request the server rejects is a TtsError carrying its status', async () => {
    const session = await cartesiaTts.open({ ...options, voice: { ...options.voice, modelId: 'sonic-unknown' } });
    await assert.rejects(collect(session.synthesize('Wrong model.', never())), (error: unknown) => error instanceof TtsError && error.statusCode === 400);
    await session.close();
    fake.violations.list.length = 0; // that violation was the point of this test
  });

  it('leaves no socket open after close, and close is idempotent', async () => {
    const baseline = activeHandles();
    const session = await cartesiaTts.open(options);
    await collect(session.synthesize('Bye.', never()));
    await session.close();
    await session.close();
    await assertNoHandlesBeyond(baseline);
  });
});
