import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadEspeakEngine, type EspeakEngine } from '../../src/voice/tts/espeak-engine.ts';
import { espeakTts, espeakWordsPerMinute } from '../../src/voice/tts/espeak.ts';
import { TtsError, type TtsOptions } from '../../src/voice/tts/types.ts';
import { rms } from './fakes/audio.ts';
import { abortAfterFirstChunk, activeHandles, assertNoHandlesBeyond, collect } from './support.ts';

const never = () => new AbortController().signal;
const options = (voice: TtsOptions['voice'] = {}): TtsOptions => ({ apiKey: null, baseUrl: '', voice, signal: never() });
const SENTENCE = 'Thank you for calling, how can I help you today?';

// The WebAssembly build from npm, not the espeak-ng program of the system: this is what runs
// after `npm install` on a machine without any apt package.
describe('eSpeak TTS (WebAssembly)', () => {
  let engine: EspeakEngine;
  before(async () => {
    engine = await loadEspeakEngine();
  });
  after(() => engine.close());

  it('speaks a sentence: non-silent audio of a plausible length at 22050 Hz', async () => {
    const session = await espeakTts(engine).open(options({ voiceId: 'en-us' }));
    const audio = await collect(session.synthesize(SENTENCE, never()));
    await session.close();
    assert.deepEqual([...audio.rates], [22050]);
    const seconds = audio.pcm.length / 22050;
    // Ten words at 175 words per minute, with espeak's pauses: about three seconds.
    assert.ok(seconds > 1.8 && seconds < 5, `${seconds} s`);
    assert.ok(rms(audio.pcm) > 1000, `rms ${rms(audio.pcm)}`);
    assert.ok(audio.count > 1, 'streamed in several chunks');
  });

  it('maps speed to words per minute: twice as fast is about half as long', async () => {
    assert.equal(espeakWordsPerMinute(undefined), 175);
    assert.equal(espeakWordsPerMinute(0.25), 80);
    assert.equal(espeakWordsPerMinute(4), 450);
    const normal = await collect((await espeakTts(engine).open(options())).synthesize(SENTENCE, never()));
    const fast = await collect((await espeakTts(engine).open(options({ speed: 2 }))).synthesize(SENTENCE, never()));
    const ratio = fast.pcm.length / normal.pcm.length;
    assert.ok(ratio > 0.4 && ratio < 0.7, `ratio ${ratio}`);
  });

  it('speaks another language with its voice', async () => {
    const german = await collect((await espeakTts(engine).open(options({ voiceId: 'de' }))).synthesize('Guten Tag, wie kann ich helfen?', never()));
    assert.ok(german.pcm.length / 22050 > 1);
  });

  it('stops at once when aborted, and the next sentence still works', async () => {
    const session = await espeakTts(engine).open(options());
    const cut = await abortAfterFirstChunk((signal) => session.synthesize(`${SENTENCE} ${SENTENCE} ${SENTENCE}`, signal));
    assert.deepEqual(cut, { before: 1, after: 0 });
    const next = await collect(session.synthesize('Next.', never()));
    assert.ok(next.pcm.length > 0);
  });

  it('an unknown voice is a TtsError', async () => {
    const session = await espeakTts(engine).open(options({ voiceId: 'xx-nope' }));
    await assert.rejects(collect(session.synthesize('Hello.', never())), (error: unknown) => error instanceof TtsError && error.provider === 'espeak');
  });

  it('an idle engine holds nothing that keeps the process up, and close stops its worker', async () => {
    const baseline = activeHandles();
    const own = await loadEspeakEngine();
    await collect((await espeakTts(own).open(options())).synthesize('Hi.', never()));
    await own.close();
    await assertNoHandlesBeyond(baseline);
  });
});
