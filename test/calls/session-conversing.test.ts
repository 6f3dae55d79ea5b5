/**
 * CallSession with a voice that holds the conversation itself (a realtime model), driven through
 * its VoiceHost without a network: the session must not run an LLM turn for it, and must still
 * keep the limits, the latency and the record.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.ts';
import type { ServerFrame } from '../../src/calls/frames.ts';
import type { CallEnd, CallLogEntry, CallSetup, SessionDeps } from '../../src/calls/record.ts';
import { CallSession } from '../../src/calls/session.ts';
import type { ConversingVoice } from '../../src/calls/voice/voice.ts';

function harness(limits: Partial<SessionDeps['limits']> = {}, attach = true) {
  const frames: ServerFrame[] = [];
  const logged: CallLogEntry[] = [];
  const ends: CallEnd[] = [];
  const said: string[] = [];
  const told: string[] = [];
  const setup: CallSetup = {
    callId: '00000000-0000-4000-8000-000000000001', traceId: 'trace', systemPrompt: 'Be brief.', greeting: 'Hello.',
    unfilled: [], settings: { model: 'gpt-realtime', temperature: undefined }, tools: [], controls: [],
    voice: { kind: 'realtime', provider: 'openai', audio: { encoding: 'pcm_s16le', sampleRate: 16000 }, vad: {}, turns: { detection: 'silence' }, access: { apiKey: null, baseUrl: '' }, model: 'gpt-realtime', voice: {} },
  };
  const deps: SessionDeps = {
    llm: { round: () => Promise.reject(new Error('a conversing voice must not get an LLM turn')) },
    send: () => Promise.reject(new Error('no tool in this test')),
    clock: new ManualClock('2026-05-04T10:00:00.000Z'),
    log: { info() {}, warn() {}, error() {} },
    limits: { idleMs: 60_000, maxMs: 60_000, maxTurns: 10, maxTranscriptBytes: 64 * 1024, historyMessages: 20, ...limits },
    recorder: {
      append: async (entries) => void logged.push(...entries),
      finish: async (end) => void ends.push(end),
    },
  };
  const session = new CallSession(setup, deps);
  const voice: ConversingVoice = {
    kind: 'realtime', speaking: false,
    say: (_id, text) => void said.push(text),
    tell: (text) => void told.push(text),
    interrupt() {}, apologize: async () => {}, close: async () => {},
  };
  session.start({ info: { type: 'websocket' }, send: (f) => void frames.push(f), close() {} }, { encoding: 'pcm_s16le', sampleRate: 16000 });
  const host = session.voiceHost();
  if (attach) session.attachVoice(voice);
  return { session, host, frames, logged, ends, said, told, attachVoice: () => session.attachVoice(voice) };
}

describe('a session whose voice converses itself', () => {
  it('asks the voice for the greeting, records the caller and the answers with their latency, and runs no LLM turn', async () => {
    const { session, host, frames, ends, said } = harness();
    assert.deepEqual(said, ['Hello.']);
    host.played('u1', 'Hello.', false);
    host.callerSpeechStarted();
    const stoppedAt = performance.now();
    host.callerTurnEnded(stoppedAt);
    host.callerTranscribed('When do you open?');
    host.firstAudio('item_7', stoppedAt + 420);
    host.played('item_7', 'At nine.', false);
    await session.end('client_ended');
    assert.deepEqual(frames.filter((f) => f.type === 'user_transcript'), [{ type: 'user_transcript', text: 'When do you open?', final: true }]);
    const [end] = ends;
    assert.deepEqual(end?.transcript.map((e) => [e.role, e.text, e.latencyMs]), [
      ['assistant', 'Hello.', undefined], ['user', 'When do you open?', undefined], ['assistant', 'At nine.', 420],
    ]);
    assert.equal(end?.outcome, 'completed');
  });

  it('a typed user_message is told to the model as a caller turn (no LLM turn); one sent before the voice is ready waits for it', async () => {
    const { session, ends, told, attachVoice } = harness({}, false);
    session.userMessage('Are you open today?');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(told, []);
    attachVoice();
    assert.deepEqual(told, ['Are you open today?']);
    session.userMessage('And tomorrow?');
    assert.deepEqual(told, ['Are you open today?', 'And tomorrow?']);
    await session.end('client_ended');
    assert.equal(ends[0]?.reason, 'client_ended'); // an LLM turn would have failed the call
    assert.deepEqual(ends[0]?.transcript.filter((e) => e.role === 'user').map((e) => e.text), ['Are you open today?', 'And tomorrow?']);
  });

  it('a caller turn past the turn limit ends the call with limit_reached', async () => {
    const { session, host, frames, ends } = harness({ maxTurns: 1 });
    host.callerTranscribed('One.');
    host.callerTranscribed('Two.');
    await session.done;
    assert.equal(ends[0]?.reason, 'limit_reached');
    assert.deepEqual(ends[0]?.transcript.filter((e) => e.role === 'user').map((e) => e.text), ['One.']);
    assert.ok(frames.some((f) => f.type === 'error' && /limit of 1 turns/.test(f.message)));
  });
});
