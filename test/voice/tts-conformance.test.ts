// The conformance suite of text to speech: every TTS provider of the registry that is reached
// over the network runs these same tests against its protocol-faithful fake (fakes/tts/<name>.ts):
// a session opens and speaks sentence after sentence on one connection, yielding exactly the
// audio the provider sent; a sentence stops at once when cut mid-way and the next still works;
// a refused key, a failed sentence and a dropped connection are TtsErrors that never carry the
// key; and a closed session leaves nothing open. What is particular to one provider (its fields,
// its defaults) stays in tts-<name>.test.ts. eSpeak, which is local, has its own file.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { providersOf } from '../../src/calls/providers/registry.ts';
import { TtsError, type TtsOptions, type TtsSession } from '../../src/voice/tts/types.ts';
import type { TtsFake, TtsFakeModule } from './fakes/tts/contract.ts';
import { abortAfterFirstChunk, activeHandles, assertNoHandlesBeyond, collect } from './support.ts';

const KEY = 'sk-conformance-key-0123456789abcdef';
const WRONG_KEY = 'sk-wrong-conformance-key-9876543210';
const never = () => new AbortController().signal;
const noEngines = { espeak: () => Promise.reject(new Error('no local engine in this suite')) };

/** An error as every way it could reach a log or a record shows it: none may hold the key. */
const everywhere = (error: unknown) => [String(error), (error as Error).stack ?? '', JSON.stringify(error), (error as Error).message].join('\n');

const networked = providersOf('tts').filter((d) => d.tts.open && d.credential !== null);

describe('every TTS provider reached over the network has a conformance fake', () => {
  it('fakes/tts/<name>.ts exports startTtsFake for each', async () => {
    assert.ok(networked.length >= 3);
    for (const d of networked) {
      const module = (await import(`./fakes/tts/${d.name}.ts`)) as Partial<TtsFakeModule>;
      assert.equal(typeof module.startTtsFake, 'function', d.name);
    }
  });
});

for (const descriptor of networked) {
  const open = descriptor.tts.open!;
  describe(`TTS conformance: ${descriptor.name} against its fake`, () => {
    let fake: TtsFake;
    let options: TtsOptions;
    before(async () => {
      const { startTtsFake } = (await import(`./fakes/tts/${descriptor.name}.ts`)) as TtsFakeModule;
      fake = await startTtsFake({ apiKey: KEY, outputSampleRate: 16000 });
      options = { apiKey: KEY, baseUrl: fake.baseUrl, voice: { ...fake.voice, outputSampleRate: 16000 }, signal: never() };
    });
    after(() => fake.close());

    const session = () => open(options, noEngines);
    const spoken = async (s: TtsSession, text: string) => {
      const from = fake.sent().length;
      const audio = await collect(s.synthesize(text, never()));
      return { audio, sent: fake.sent()[from] };
    };

    it('start and stream: sentence after sentence on one session, exactly the audio the provider sent, in a rate it declares', async () => {
      const s = await session();
      const first = await spoken(s, 'Hello from the conformance suite.');
      const second = await spoken(s, 'A second sentence follows.');
      await s.close();
      assert.deepEqual(fake.violations(), []);
      for (const { audio, sent } of [first, second]) {
        assert.deepEqual(audio.pcm, sent?.pcm);
        assert.deepEqual([...audio.rates], [fake.sampleRate]);
        assert.ok(descriptor.tts.sampleRates.includes(fake.sampleRate), `${fake.sampleRate} Hz is among the rates ${descriptor.name} declares`);
      }
      assert.equal(first.sent?.text, 'Hello from the conformance suite.');
      assert.ok(first.audio.pcm.length > fake.sampleRate * 0.8, 'about a second and more of speech');
      if (descriptor.tts.streaming) assert.ok(first.audio.count > 1, 'a streaming provider yields the sentence in several chunks');
    });

    it('cancel mid-sentence: nothing more after the abort, and the next sentence on the same session is whole', async () => {
      const s = await session();
      fake.pace(10);
      const cut = await abortAfterFirstChunk((signal) => s.synthesize('This sentence is cut off right after it starts to play.', signal));
      fake.pace(2);
      assert.deepEqual(cut, { before: 1, after: 0 });
      const next = await spoken(s, 'Still here after the cut.');
      await s.close();
      assert.deepEqual(next.audio.pcm, next.sent?.pcm);
      assert.deepEqual(fake.violations(), []);
    });

    it('provider error: a refused key is a TtsError with the HTTP status, at open or at the first sentence, without the key', async () => {
      const attempt = async () => {
        const s = await open({ ...options, apiKey: WRONG_KEY }, noEngines);
        try {
          await collect(s.synthesize('Hi.', never()));
        } finally {
          await s.close();
        }
      };
      const error = await attempt().then(() => null, (e: unknown) => e);
      assert.ok(error instanceof TtsError, String(error));
      assert.equal(error.statusCode, 401);
      assert.equal(error.provider, descriptor.name);
      assert.ok(!everywhere(error).includes(WRONG_KEY) && !everywhere(error).includes(WRONG_KEY.slice(-6)), everywhere(error));
    });

    it('provider error: a sentence the provider fails before any audio is a TtsError, and the session speaks the next one', async () => {
      const s = await session();
      fake.failNextSentence();
      const error = await collect(s.synthesize('This one fails.', never())).then(() => null, (e: unknown) => e);
      assert.ok(error instanceof TtsError, String(error));
      assert.ok(!everywhere(error).includes(KEY));
      const next = await spoken(s, 'And this one works.');
      await s.close();
      assert.deepEqual(next.audio.pcm, next.sent?.pcm);
    });

    it('provider error: a connection dropped mid-sentence is a TtsError; the session goes on', async () => {
      const s = await session();
      fake.dropAfterChunks(1);
      await assert.rejects(collect(s.synthesize('The connection drops in the middle of this sentence.', never())), TtsError);
      const next = await spoken(s, 'Back again.');
      await s.close();
      assert.deepEqual(next.audio.pcm, next.sent?.pcm);
    });

    it('close leaves no socket or timer behind, and is idempotent', async () => {
      const baseline = activeHandles();
      const s = await session();
      await collect(s.synthesize('Short.', never()));
      await s.close();
      await s.close();
      await assertNoHandlesBeyond(baseline);
    });
  });
}
