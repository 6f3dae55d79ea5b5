// What is particular to this provider's protocol; what every provider must do (streaming, cutting a
// sentence or an utterance, errors without the key, cleanup) is in the conformance suite (tts-conformance.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openAiTts } from '../../src/voice/tts/openai.ts';
import { TtsError, type TtsOptions } from '../../src/voice/tts/types.ts';
import { startOpenAiSpeechFake, type OpenAiSpeechFake } from './fakes/openai-speech.ts';
import { collect } from './support.ts';

const KEY = 'sk-test-0123456789abcdef';
const never = () => new AbortController().signal;

describe('OpenAI speech TTS against its fake', () => {
  let fake: OpenAiSpeechFake;
  let options: TtsOptions;
  before(async () => {
    fake = await startOpenAiSpeechFake({ apiKey: KEY, model: 'gpt-4o-mini-tts', voice: 'coral', speed: 1.25 });
    options = { apiKey: KEY, baseUrl: fake.url, voice: { voiceId: 'coral', speed: 1.25 }, signal: never() };
  });
  after(() => fake.close());

  it('posts the documented body and yields exactly the 24 kHz audio the server streamed', async () => {
    const session = await openAiTts.open(options);
    const first = await collect(session.synthesize('  Hello from the speech endpoint.  ', never()));
    const second = await collect(session.synthesize('And another one.', never()));
    await session.close();
    fake.violations.check();
    assert.deepEqual([...first.rates], [24000]);
    assert.deepEqual(first.pcm, fake.sent.at(-2)?.pcm);
    assert.deepEqual(second.pcm, fake.sent.at(-1)?.pcm);
    assert.deepEqual(fake.requests.at(-2)?.body, { model: 'gpt-4o-mini-tts', voice: 'coral', input: 'Hello from the speech endpoint.', response_format: 'pcm', speed: 1.25 });
  });

  it('sends no Authorization header to a server that takes no key, and uses the defaults', async () => {
    const open = await startOpenAiSpeechFake({ apiKey: null, model: 'gpt-4o-mini-tts', voice: 'alloy' });
    try {
      const session = await openAiTts.open({ apiKey: null, baseUrl: `${open.url}/`, voice: {}, signal: never() });
      const audio = await collect(session.synthesize('Local server.', never()));
      await session.close();
      open.violations.check();
      assert.deepEqual(audio.pcm, open.sent[0]?.pcm);
      assert.equal(open.requests[0]?.headers.authorization, undefined);
    } finally {
      await open.close();
    }
  });

  it('a 401 quotes the key half-masked, as OpenAI does: no part of it reaches the TtsError', async () => {
    const wrongKey = 'sk-wrong-abcdefghijklmnop';
    const session = await openAiTts.open({ ...options, apiKey: wrongKey });
    await assert.rejects(collect(session.synthesize('Hi.', never())), (error: unknown) => {
      assert.ok(error instanceof TtsError);
      assert.equal(error.statusCode, 401);
      assert.ok(!error.message.includes(wrongKey.slice(-4)), error.message);
      assert.ok(!error.message.includes('sk-'), error.message);
      return true;
    });
    await session.close();
  });
});
