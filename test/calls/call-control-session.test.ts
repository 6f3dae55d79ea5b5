/**
 * The session's side of the CallControl seam, on a test-only transport that can transfer and
 * play DTMF (the SIP transport is built elsewhere to the same interface). The LLM is the scripted
 * OpenAI-compatible server; no database is involved (the record is kept in memory), so these run
 * once, not per dialect: recording to call_entries is covered by call-control.test.ts.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { systemClock } from '../../src/clock.ts';
import { controlToolsOf } from '../../src/calls/control-tools.ts';
import { createLlm } from '../../src/calls/llm-openai.ts';
import type { CallEnd, CallLogEntry, CallSetup, SessionDeps } from '../../src/calls/record.ts';
import { CallSession } from '../../src/calls/session.ts';
import type { CallVoice } from '../../src/calls/voice/voice.ts';
import { ManualPacerClock } from '../../src/voice/pacer-clock.ts';
import { TestOnlyControlTransport } from './support/control-transport.ts';
import { startLlmServer, type LlmServer } from './support/llm-server.ts';

const DESTINATION = '+4930123456';
const EXTENSIONS = [
  { type: 'end_call', name: 'end_call', parameters: {} },
  { type: 'transfer_call', name: 'transfer_call', parameters: { destination: DESTINATION, message: 'Connecting you now.' } },
  { type: 'send_dtmf', name: 'press_keys', parameters: { description: 'Navigate the phone menu' } },
];

interface Harness {
  session: CallSession;
  transport: TestOnlyControlTransport;
  timers: ManualPacerClock;
  entries: CallLogEntry[];
  ended: Promise<CallEnd>;
}

function newCall(llm: LlmServer): Harness {
  const timers = new ManualPacerClock();
  const entries: CallLogEntry[] = [];
  let finished!: (end: CallEnd) => void;
  const ended = new Promise<CallEnd>((resolve) => (finished = resolve));
  const setup: CallSetup = {
    callId: crypto.randomUUID(), traceId: 'a'.repeat(32), systemPrompt: 'You answer the phone.', greeting: null, unfilled: [],
    settings: { model: 'test-model', temperature: undefined }, tools: [], controls: controlToolsOf(EXTENSIONS, new Set()), voice: null,
  };
  const deps: SessionDeps = {
    llm: createLlm({ baseUrl: llm.baseUrl, apiKey: 'test', firstTokenMs: 5000, tokenGapMs: 5000 }),
    send: () => Promise.reject(new Error('no tool webhooks in these tests')),
    clock: systemClock,
    log: { info() {}, warn() {}, error() {} },
    limits: { idleMs: 60_000, maxMs: 60_000, maxTurns: 50, maxTranscriptBytes: 100_000, historyMessages: 40 },
    recorder: { append: async (e) => void entries.push(...e), finish: async (end) => finished(end) },
    timers,
  };
  const session = new CallSession(setup, deps);
  const transport = new TestOnlyControlTransport();
  session.start(transport);
  return { session, transport, timers, entries, ended };
}

/** The LLM calls `calls` once for the first user message, then answers with the tool results it got. */
function scriptTools(llm: LlmServer, calls: { id: string; name: string; arguments: string }[]) {
  llm.respond = (body) => {
    const last = body.messages.at(-1);
    if (last.role === 'user') return { toolCalls: calls };
    return { text: `Tool said: ${body.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.content).join(' | ')}` };
  };
}

describe('call-control tools on a transport with CallControl', () => {
  let llm: LlmServer;
  let h: Harness;
  before(async () => {
    llm = await startLlmServer();
  });
  beforeEach(() => {
    llm.requests.length = 0;
    h = newCall(llm);
  });
  after(async () => {
    await h.session.end('client_ended');
    await llm.close();
  });

  it('offers all three tools, with the extension names, descriptions and argument schemas', async () => {
    llm.respond = () => ({ text: 'Hello.' });
    h.session.userMessage('Hi');
    await h.transport.nextFrame('assistant_message');
    const tools = llm.requests[0].tools.map((t: any) => t.function);
    assert.deepEqual(tools.map((t: any) => t.name), ['end_call', 'transfer_call', 'press_keys']);
    assert.deepEqual(tools[1].parameters.properties, {}, 'the destination is fixed: the LLM cannot choose one');
    assert.equal(tools[2].description, 'Navigate the phone menu');
    assert.equal(tools[2].parameters.properties.digits.pattern, '^[0-9*#A-Da-d,w]{1,32}$');
    assert.deepEqual(tools[2].parameters.required, ['digits']);
    await h.session.end('client_ended');
  });

  it('transfer_call says its message, then transfers, and the call ends as transferred', async () => {
    scriptTools(llm, [{ id: 'call_t', name: 'transfer_call', arguments: '' }]);
    h.session.userMessage('I want a person.');
    const end = await h.ended;
    assert.equal(end.reason, 'transferred');
    assert.equal((await h.transport.nextFrame('call_ended')).reason, 'transferred');
    const order = h.transport.events.map((e) => ('frame' in e ? e.frame.type : Object.keys(e)[0]));
    const said = order.indexOf('assistant_message');
    assert.ok(said >= 0 && said < order.indexOf('transfer'), `the message goes out before the transfer: ${order.join(',')}`);
    assert.deepEqual(h.transport.events.filter((e) => 'transfer' in e), [{ transfer: DESTINATION }]);
    assert.equal(h.transport.frames.find((f) => f.type === 'assistant_message')?.text, 'Connecting you now.');
    assert.equal(h.transport.frames.at(-1)?.type, 'call_ended');
    assert.equal(llm.requests.length, 1, 'the LLM is not asked again');
    const [inv] = end.toolInvocations;
    assert.equal(inv?.type, 'transfer_call');
    assert.equal(inv?.outcome, 'ok');
    assert.equal(inv?.result, `Transferred the call to ${DESTINATION}.`);
  });

  it('a refused transfer tells the LLM why, is recorded, and the call goes on', async () => {
    h.transport.transferAnswer = async () => ({ ok: false, reason: '486 Busy Here' });
    scriptTools(llm, [{ id: 'call_t', name: 'transfer_call', arguments: '{}' }]);
    h.session.userMessage('I want a person.');
    const answer = await h.transport.nextFrame('assistant_message', (f) => f.text.startsWith('Tool said'));
    assert.equal(answer.text, `Tool said: Said "Connecting you now.". The transfer to ${DESTINATION} failed (486 Busy Here); the caller is still on the line.`);
    const tool = h.transport.frames.find((f) => f.type === 'tool_result');
    assert.equal(tool?.type === 'tool_result' && tool.ok, false);
    await h.session.end('client_ended');
    const end = await h.ended;
    assert.equal(end.reason, 'client_ended');
    assert.deepEqual(end.toolInvocations.map((i) => [i.type, i.outcome]), [['transfer_call', 'transfer_failed']]);
    assert.match(end.toolInvocations[0]?.result ?? '', /486 Busy Here/);
  });

  it('a transport that throws on transfer is a refusal too', async () => {
    h.transport.transferAnswer = () => Promise.reject(new Error('no dialog'));
    scriptTools(llm, [{ id: 'call_t', name: 'transfer_call', arguments: '{}' }]);
    h.session.userMessage('Transfer me');
    assert.match((await h.transport.nextFrame('assistant_message', (f) => f.text.startsWith('Tool said'))).text, /failed \(no dialog\)/);
    await h.session.end('client_ended');
  });

  it('send_dtmf plays the keys through the transport and tells the LLM; bad digits never reach it', async () => {
    scriptTools(llm, [
      { id: 'call_d1', name: 'press_keys', arguments: '{"digits":"1w2,#a"}' },
      { id: 'call_d2', name: 'press_keys', arguments: '{"digits":"12; rm"}' },
    ]);
    h.session.userMessage('Choose option one in the menu.');
    const answer = await h.transport.nextFrame('assistant_message');
    assert.deepEqual(h.transport.events.filter((e) => 'sendDtmf' in e), [{ sendDtmf: '1w2,#A' }]);
    assert.match(answer.text, /^Tool said: Pressed the keys 1w2,#A\. \| No keys were pressed: "digits" must be/);
    await h.session.end('client_ended');
    const end = await h.ended;
    // Recorded as each finished (they run in parallel): compare by id.
    assert.deepEqual(end.toolInvocations.map((i) => [i.id, i.name, i.type, i.outcome]).sort(), [
      ['call_d1', 'press_keys', 'send_dtmf', 'ok'], ['call_d2', 'press_keys', 'send_dtmf', 'invalid_arguments'],
    ]);
  });

  it('a failing sendDtmf is reported as dtmf_failed', async () => {
    h.transport.dtmfAnswer = () => Promise.reject(new Error('no RTP'));
    scriptTools(llm, [{ id: 'call_d', name: 'press_keys', arguments: '{"digits":"9"}' }]);
    h.session.userMessage('Press nine.');
    assert.match((await h.transport.nextFrame('assistant_message')).text, /The keys could not be sent/);
    await h.session.end('client_ended');
    assert.equal((await h.ended).toolInvocations[0]?.outcome, 'dtmf_failed');
  });

  it('keys from the transport are gathered on the injected timers: 1.5 s after the last key, non-keys ignored', async () => {
    llm.respond = () => ({ text: 'Got it.' });
    h.session.dtmf('1');
    h.session.dtmf('x'); // not a keypad key: ignored
    h.session.dtmf('b'); // lower-case a-d are the keys A-D
    h.timers.advance(1_499);
    assert.ok(!h.transport.frames.some((f) => f.type === 'dtmf'), 'not yet: the caller may press more');
    h.session.dtmf('2');
    h.timers.advance(1_499);
    assert.ok(!h.transport.frames.some((f) => f.type === 'dtmf'), 'each key restarts the wait');
    h.timers.advance(1);
    assert.deepEqual(await h.transport.nextFrame('dtmf'), { type: 'dtmf', digits: '1B2' });
    await h.transport.nextFrame('assistant_message');
    assert.deepEqual(llm.requests[0].messages.at(-1), { role: 'user', content: 'the caller pressed 1 B 2' });
    await h.session.end('client_ended');
    const end = await h.ended;
    assert.deepEqual(end.transcript.map((e) => [e.role, e.text]), [['dtmf', '1B2'], ['assistant', 'Got it.']]);
    assert.equal(end.outcome, 'completed');
    assert.equal(h.timers.pendingTimers, 0);
  });

  it('a key pressed while the assistant speaks interrupts it, like speech', async () => {
    let interrupted = 0;
    const voice: CallVoice = {
      kind: 'pipeline',
      begin: () => ({ delta() {}, end() {} }),
      say() {},
      speaking: true,
      interrupt: () => void interrupted++,
      apologize: async () => {},
      close: async () => {},
    };
    h.session.attachVoice(voice);
    h.session.dtmf('5');
    assert.equal(interrupted, 1);
    await h.session.end('client_ended');
  });

  it('on a voice call, end_call waits until its last sentence was spoken before the call ends', async () => {
    const said: { id: string; text: string }[] = [];
    let onSay: () => void = () => {};
    const voice: CallVoice = {
      kind: 'pipeline',
      begin: () => ({ delta() {}, end() {} }),
      say: (id, text) => {
        said.push({ id, text });
        onSay();
      },
      speaking: false,
      interrupt() {},
      apologize: async () => {},
      close: async () => {},
    };
    h.session.attachVoice(voice);
    scriptTools(llm, [{ id: 'call_e', name: 'end_call', arguments: '{"message":"Goodbye."}' }]);
    const sayCalled = new Promise<void>((resolve) => (onSay = resolve));
    h.session.voiceHost().callerSaid('That is all.', { lastSpeechAt: 0, endedAt: 0, endpointing: 'vad' });
    await sayCalled;
    assert.deepEqual(said.map((s) => s.text), ['Goodbye.']);
    // Let every pending callback run: the call must still be on, waiting for the audio.
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(!h.transport.frames.some((f) => f.type === 'call_ended'), 'not ended before the sentence was spoken');
    h.session.voiceHost().played(said[0]?.id ?? '', 'Goodbye.', false);
    const end = await h.ended;
    assert.equal(end.reason, 'assistant_ended');
    assert.deepEqual(end.transcript.map((e) => [e.role, e.text]), [['user', 'That is all.'], ['assistant', 'Goodbye.']]);
  });
});
