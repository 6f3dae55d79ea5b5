import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openVoice } from '../../src/calls/voice/attach.ts';
import { createVoiceKit, type VoiceKit } from '../../src/calls/voice/kit.ts';
import type { AudioLink } from '../../src/calls/voice/link.ts';
import type { VoiceHost } from '../../src/calls/voice/voice.ts';
import type { CallFailure } from '../../src/calls/failure.ts';
import { turnSettings } from '../../src/calls/turns/settings.ts';
import { DEFAULT_VAD_SETTINGS } from '../../src/voice/vad.ts';
import { startFakeDeepgram, type FakeDeepgram } from '../voice/fakes/deepgram.ts';

const KEY = 'dg-opening-key-0123456789';

/**
 * A voice call's providers are opened under a bound (the call fails if they take too long), but
 * the sessions live as long as the call: a speech-to-text session that closed itself when the
 * opening bound ran out ended every Deepgram call 15 s in.
 */
describe('opening a call voice', () => {
  let fake: FakeDeepgram;
  let kit: VoiceKit;
  before(async () => {
    fake = await startFakeDeepgram({ apiKey: KEY, model: 'nova-3', language: 'en' });
    kit = createVoiceKit();
  });
  after(async () => {
    await kit.close();
    await fake.close();
  });

  it('keeps the STT session open after the opening bound expires, and closes it when the call ends', async () => {
    const failures: CallFailure[] = [];
    const host = {
      frame: () => undefined, callerSpeechStarted: () => undefined, callerSaid: () => undefined, callerTurnEnded: () => undefined,
      callerTranscribed: () => undefined, runTools: async () => [], firstAudio: () => undefined, played: () => undefined,
      callerInterrupted: () => undefined, callerSpeculating: () => undefined, callerSpeculationCancelled: () => undefined, falseInterruption: () => undefined,
      failed: (failure: CallFailure) => void failures.push(failure),
    } satisfies VoiceHost;
    const link: AudioLink = {
      format: { encoding: 'pcm_s16le', sampleRate: 16000 }, lead: 0,
      sendFrame: () => undefined, flushPeer: () => undefined, onAudio: () => undefined,
    };
    const opening = new AbortController();
    const call = new AbortController();
    const voice = await openVoice(kit, {
      plan: {
        kind: 'pipeline', audio: link.format, vad: { ...DEFAULT_VAD_SETTINGS }, turn: turnSettings(),
        tts: { provider: 'espeak', access: { apiKey: null, baseUrl: '' }, voice: {} },
        stt: { provider: 'deepgram', access: { apiKey: KEY, baseUrl: fake.url }, model: 'nova-3', language: 'en' },
      },
      link, host, signal: opening.signal, lifetime: call.signal, instructions: null, tools: [],
      log: { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined } as never,
    });
    await fake.waitFor(() => fake.openConnections() === 1, 'the STT socket open');

    opening.abort(); // the opening bound runs out while the call goes on
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(fake.openConnections(), 1, 'the STT socket must outlive the opening bound');
    assert.ok(!fake.controls.includes('CloseStream'), 'no CloseStream before the call ends');
    assert.deepEqual(failures, []);

    call.abort();
    await voice.close();
    await fake.waitFor(() => fake.openConnections() === 0, 'the STT socket closed with the call');
    assert.deepEqual(fake.problems, []);
  });
});
