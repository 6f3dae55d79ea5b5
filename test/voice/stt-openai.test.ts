// What is particular to this provider's protocol; what every provider must do (streaming, cutting a
// sentence or an utterance, errors without the key, cleanup) is in the conformance suite (stt-conformance.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createOpenAiStt } from '../../src/voice/stt/openai.ts';
import { SttError, type SttSession } from '../../src/voice/stt/stt.ts';
import { startFakeOpenAiStt, type FakeOpenAiStt } from './fakes/openai-stt.ts';
import { durationRatio, similarity } from './support/compare.ts';
import { activeResources, assertNoNewResources } from './support/resources.ts';
import { speech } from './support/speech.ts';

const KEY = 'sk-test-0123456789abcdefghijklmnop';
const TRANSCRIPT = 'What time do you open on Sunday?';

function writeInFrames(session: SttSession, pcm: Int16Array): void {
  for (let at = 0; at < pcm.length; at += 320) session.write(pcm.subarray(at, at + 320));
}

const failure = (promise: Promise<unknown>) => promise.then(() => null, (e: unknown) => e);

describe('OpenAI-compatible STT', () => {
  let fake: FakeOpenAiStt;
  let utterance: Int16Array;
  before(async () => {
    fake = await startFakeOpenAiStt({ apiKey: KEY, model: 'gpt-4o-mini-transcribe', language: 'en' });
    utterance = await speech(TRANSCRIPT);
  });
  after(() => fake.close());

  const open = (apiKey: string | null = KEY, baseUrl = fake.url) =>
    createOpenAiStt().open({ apiKey, baseUrl, language: 'en-US', signal: new AbortController().signal });

  it('uploads the utterance as a WAV with the form fields, returns the text, and closes without leaving a handle', async () => {
    fake.setTranscript(TRANSCRIPT);
    await fake.waitFor(() => fake.openConnections() === 0, 'earlier connections closed');
    const handles = activeResources();
    const session = await open();
    writeInFrames(session, utterance);
    assert.equal(await session.endUtterance(), TRANSCRIPT);
    const request = fake.requests.at(-1)!;
    assert.equal(request.authorization, `Bearer ${KEY}`);
    assert.deepEqual(request.fields, { model: 'gpt-4o-mini-transcribe', language: 'en', response_format: 'json' });
    assert.equal(request.audio.length, utterance.length);
    assert.equal(durationRatio(utterance, request.audio), 1);
    assert.ok(similarity(utterance, request.audio, 0).ncc >= 0.99);

    await session.close();
    await session.close(); // idempotent
    await fake.waitFor(() => fake.openConnections() === 0, 'the fake to see the connection closed');
    assertNoNewResources(handles);
    assert.deepEqual(fake.problems, []);
  });

  it('sends each utterance on its own, and nothing for an utterance without audio', async () => {
    const session = await open();
    try {
      const count = fake.requests.length;
      assert.equal(await session.endUtterance(), '');
      assert.equal(fake.requests.length, count);
      fake.setTranscript('one');
      writeInFrames(session, utterance.subarray(0, 8000));
      assert.equal(await session.endUtterance(), 'one');
      fake.setTranscript('two');
      writeInFrames(session, utterance.subarray(8000, 12000));
      assert.equal(await session.endUtterance(), 'two');
      assert.deepEqual(fake.requests.slice(count).map((r) => r.audio.length), [8000, 4000]);
    } finally {
      await session.close();
    }
  });

  it('sends no Authorization header without a key (self-hosted Whisper servers)', async () => {
    const keyless = await startFakeOpenAiStt({ apiKey: null, model: 'Systran/faster-whisper-small' });
    try {
      keyless.setTranscript('local');
      const session = await createOpenAiStt().open({ apiKey: null, baseUrl: keyless.url, model: 'Systran/faster-whisper-small', signal: new AbortController().signal });
      writeInFrames(session, utterance.subarray(0, 8000));
      assert.equal(await session.endUtterance(), 'local');
      await session.close();
      assert.equal(keyless.requests[0]!.authorization, undefined);
      assert.deepEqual(keyless.problems, []);
    } finally {
      await keyless.close();
    }
  });

  it('a wrong key: SttError with statusCode 401, and the key the server echoed is not in it', async () => {
    const wrongKey = 'sk-wrong-key-that-must-not-leak';
    const session = await open(wrongKey);
    writeInFrames(session, utterance.subarray(0, 8000));
    const err = await failure(session.endUtterance());
    await session.close();
    assert.ok(err instanceof SttError, String(err));
    assert.equal(err.provider, 'openai');
    assert.equal(err.statusCode, 401);
    assert.match(err.message, /401 invalid_api_key/);
    assert.ok(!err.message.includes(wrongKey) && !err.stack?.includes(wrongKey));
  });

});
