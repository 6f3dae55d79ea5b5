// The conformance suite of speech to text: every STT provider of the registry runs these same
// tests against its protocol-faithful fake (fakes/stt/<name>.ts): a session hears an utterance
// intact and answers its text, each utterance of a call on its own; an utterance cut by close()
// or by the call ending rejects; a refused key, an unreachable server and a provider failing an
// utterance are SttErrors that never carry the key; and nothing is left open. What is particular
// to one provider (its query or form fields, keep-alives, finalising) stays in stt-<name>.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { providersOf } from '../../src/calls/providers/registry.ts';
import { SttError, type SttOptions, type SttSession } from '../../src/voice/stt/stt.ts';
import type { SttFake, SttFakeModule } from './fakes/stt/contract.ts';
import { durationRatio, similarity } from './support/compare.ts';
import { activeResources, assertNoNewResources } from './support/resources.ts';
import { speech } from './support/speech.ts';

const KEY = 'sk-conformance-stt-key-0123456789';
const WRONG_KEY = 'sk-wrong-stt-key-that-must-not-leak';
const TRANSCRIPT = 'I would like to change my delivery address';
const SETTINGS = { model: 'conformance-model', language: 'en-US' };

const everywhere = (error: unknown) => [String(error), (error as Error).stack ?? '', JSON.stringify(error)].join('\n');
const failure = (promise: Promise<unknown>) => promise.then(() => null, (e: unknown) => e);

function writeInFrames(session: SttSession, pcm: Int16Array): void {
  for (let at = 0; at < pcm.length; at += 320) session.write(pcm.subarray(at, at + 320));
}

describe('every STT provider has a conformance fake', () => {
  it('fakes/stt/<name>.ts exports startSttFake for each', async () => {
    for (const d of providersOf('stt')) {
      const module = (await import(`./fakes/stt/${d.name}.ts`)) as Partial<SttFakeModule>;
      assert.equal(typeof module.startSttFake, 'function', d.name);
    }
  });
});

for (const descriptor of providersOf('stt')) {
  describe(`STT conformance: ${descriptor.name} against its fake`, () => {
    let fake: SttFake;
    let utterance: Int16Array;
    before(async () => {
      const { startSttFake } = (await import(`./fakes/stt/${descriptor.name}.ts`)) as SttFakeModule;
      fake = await startSttFake({ apiKey: KEY, ...SETTINGS });
      utterance = await speech(TRANSCRIPT);
    });
    after(() => fake.close());

    const options = (over: Partial<SttOptions> = {}): SttOptions => ({ apiKey: KEY, baseUrl: fake.baseUrl, ...SETTINGS, signal: new AbortController().signal, ...over });
    const settled = () => fake.waitFor(() => fake.openConnections() === 0, 'earlier connections closed');

    it('start and stream: the utterance arrives intact, its text comes back, and closing leaves nothing open', async () => {
      fake.setTranscript(TRANSCRIPT);
      await settled();
      const handles = activeResources();
      const audioBefore = fake.receivedAudio().length;
      const session = await descriptor.stt.open(options());
      const interims: string[] = [];
      session.onInterim = (text) => interims.push(text);
      writeInFrames(session, utterance);
      assert.equal(await session.endUtterance(), TRANSCRIPT);
      const received = fake.receivedAudio().subarray(audioBefore);
      assert.equal(received.length, utterance.length);
      assert.equal(durationRatio(utterance, received), 1);
      assert.ok(similarity(utterance, received, 0).ncc >= 0.99);
      if (descriptor.stt.interim) assert.ok(interims.length > 0 && TRANSCRIPT.startsWith(interims[0]!), `interims ${JSON.stringify(interims)}`);
      await session.close();
      await session.close();
      await settled();
      assertNoNewResources(handles);
      assert.deepEqual(fake.problems(), []);
    });

    it('each utterance of a call on its own; one without audio is no text', async () => {
      const session = await descriptor.stt.open(options());
      try {
        assert.equal(await session.endUtterance(), '');
        fake.setTranscript('first one');
        writeInFrames(session, utterance.subarray(0, 12000));
        assert.equal(await session.endUtterance(), 'first one');
        fake.setTranscript('and the second one');
        writeInFrames(session, utterance.subarray(0, 4000));
        assert.equal(await session.endUtterance(), 'and the second one');
      } finally {
        await session.close();
      }
      assert.deepEqual(fake.problems(), []);
    });

    it('cancel mid-utterance: close() while the text is awaited rejects it; the call ending closes the session', async () => {
      const session = await descriptor.stt.open(options());
      writeInFrames(session, utterance.subarray(0, 3200));
      fake.hangNextUtterance();
      const waiting = failure(session.endUtterance());
      await new Promise((resolve) => setTimeout(resolve, 50));
      await session.close();
      assert.ok((await waiting) instanceof SttError, 'the waiting endUtterance rejects');

      const call = new AbortController();
      const ending = await descriptor.stt.open(options({ signal: call.signal }));
      call.abort();
      assert.ok((await failure(ending.endUtterance())) instanceof SttError);
      await ending.close();
      await settled();
    });

    it('provider error: a refused key is an SttError 401, at open or at the first utterance, without the key', async () => {
      await settled();
      const handles = activeResources();
      const attempt = async () => {
        const session = await descriptor.stt.open(options({ apiKey: WRONG_KEY }));
        try {
          writeInFrames(session, utterance.subarray(0, 8000));
          await session.endUtterance();
        } finally {
          await session.close();
        }
      };
      const error = await failure(attempt());
      assert.ok(error instanceof SttError, String(error));
      assert.equal(error.statusCode, 401);
      assert.equal(error.provider, descriptor.name);
      assert.ok(!everywhere(error).includes(WRONG_KEY), everywhere(error));
      await settled();
      assertNoNewResources(handles);
    });

    it('provider error: an utterance the provider fails is an SttError; an unreachable server is one too', async () => {
      const session = await descriptor.stt.open(options());
      fake.failNextUtterance();
      writeInFrames(session, utterance.subarray(0, 8000));
      const error = await failure(session.endUtterance());
      await session.close();
      assert.ok(error instanceof SttError, String(error));
      assert.ok(!everywhere(error).includes(KEY));

      const unreachable = async () => {
        const s = await descriptor.stt.open(options({ baseUrl: fake.baseUrl.replace(/:\d+/, ':1') }));
        try {
          writeInFrames(s, utterance.subarray(0, 8000));
          await s.endUtterance();
        } finally {
          await s.close();
        }
      };
      assert.ok((await failure(unreachable())) instanceof SttError);
    });
  });
}
