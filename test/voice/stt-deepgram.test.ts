// What is particular to this provider's protocol; what every provider must do (streaming, cutting a
// sentence or an utterance, errors without the key, cleanup) is in the conformance suite (stt-conformance.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createDeepgramStt, type DeepgramSettings } from '../../src/voice/stt/deepgram.ts';
import { SttError, type SttSession } from '../../src/voice/stt/stt.ts';
import { startFakeDeepgram, type FakeDeepgram } from './fakes/deepgram.ts';
import { durationRatio, similarity } from './support/compare.ts';
import { activeResources, assertNoNewResources } from './support/resources.ts';
import { speech } from './support/speech.ts';

const KEY = 'dg-test-key-0123456789abcdef';
const TRANSCRIPT = 'I would like to change my delivery address';

function frames(pcm: Int16Array, size = 320): Int16Array[] {
  const out: Int16Array[] = [];
  for (let at = 0; at < pcm.length; at += size) out.push(pcm.subarray(at, at + size));
  return out;
}

describe('Deepgram live STT', () => {
  let fake: FakeDeepgram;
  let utterance: Int16Array;
  before(async () => {
    fake = await startFakeDeepgram({ apiKey: KEY, model: 'nova-3', language: 'en-US' });
    utterance = await speech(TRANSCRIPT);
  });
  after(() => fake.close());

  async function open(settings: Partial<DeepgramSettings> = {}, apiKey: string | null = KEY): Promise<SttSession> {
    const provider = createDeepgramStt({ keepAliveMs: 60_000, ...settings });
    return provider.open({ apiKey, baseUrl: fake.url, model: 'nova-3', language: 'en-US', signal: new AbortController().signal });
  }

  it('streams the utterance as it is, gets interim then final text, and closes without leaving a handle', async () => {
    fake.setTranscript(TRANSCRIPT);
    const audioBefore = fake.receivedAudio().length;
    await fake.waitFor(() => fake.openConnections() === 0, 'earlier sockets closed');
    const handles = activeResources();
    const session = await open();
    const interims: string[] = [];
    session.onInterim = (text) => interims.push(text);
    for (const frame of frames(utterance)) session.write(frame);
    assert.equal(await session.endUtterance(), TRANSCRIPT);
    assert.deepEqual(interims, ['I', 'I would like to', 'I would like to change']);

    const received = fake.receivedAudio().subarray(audioBefore);
    assert.equal(received.length, utterance.length);
    assert.equal(durationRatio(utterance, received), 1);
    assert.ok(similarity(utterance, received, 0).ncc >= 0.99);
    assert.deepEqual(fake.requests.at(-1), {
      authorization: `Token ${KEY}`,
      query: { encoding: 'linear16', sample_rate: '16000', channels: '1', interim_results: 'true', punctuate: 'true', endpointing: '300', model: 'nova-3', language: 'en-US' },
    });

    await session.close();
    await session.close(); // idempotent
    assert.equal(fake.controls.at(-1), 'CloseStream');
    await fake.waitFor(() => fake.openConnections() === 0, 'the fake to see the socket closed');
    assertNoNewResources(handles);
    assert.deepEqual(fake.problems, []);
  });

  it('sends KeepAlive while no audio flows; without it the socket is closed as idle', async () => {
    const session = await open({ keepAliveMs: 20 });
    try {
      const before = fake.controls.filter((c) => c === 'KeepAlive').length;
      await fake.waitFor(() => fake.controls.filter((c) => c === 'KeepAlive').length >= before + 5, 'five KeepAlive messages');
    } finally {
      await session.close();
    }
    // Deepgram closes a socket that gets neither audio nor KeepAlive for 10 s; this fake after 100 ms.
    const strict = await startFakeDeepgram({ apiKey: KEY, idleTimeoutMs: 100 });
    try {
      const silent = await createDeepgramStt({ keepAliveMs: 60_000 }).open({ apiKey: KEY, baseUrl: strict.url, signal: new AbortController().signal });
      await strict.waitFor(() => strict.openConnections() === 0, 'the idle socket closed');
      await assert.rejects(silent.endUtterance(), /1011 NET-0001/);
      await silent.close();
      assert.deepEqual(strict.problems, []);
    } finally {
      await strict.close();
    }
  });

  it('when Finalize gets no from_finalize answer, returns the final text it has after the timeout', async () => {
    fake.setTranscript(TRANSCRIPT);
    fake.answerFinalize(false);
    const session = await open({ finalizeTimeoutMs: 200 });
    try {
      const finalSeen = new Promise<void>((resolve) => (session.onInterim = (text) => text === 'I would like to' && resolve()));
      for (const frame of frames(utterance)) session.write(frame);
      await finalSeen; // the first half's is_final result has arrived; the rest never comes
      assert.equal(await session.endUtterance(), 'I would like to');
    } finally {
      fake.answerFinalize(true);
      await session.close();
    }
  });

  it('the server closing mid-utterance makes endUtterance reject with SttError; close still cleans up', async () => {
    await fake.waitFor(() => fake.openConnections() === 0, 'earlier sockets closed');
    const handles = activeResources();
    const session = await open();
    for (const frame of frames(utterance.subarray(0, 3200))) session.write(frame);
    fake.closeConnections(1011, 'NET-0000');
    await fake.waitFor(() => fake.openConnections() === 0, 'the server-side close');
    const err = await session.endUtterance().then(() => null, (e: unknown) => e);
    assert.ok(err instanceof SttError, String(err));
    assert.match(err.message, /1011 NET-0000/);
    await session.close();
    assertNoNewResources(handles);
  });

});
