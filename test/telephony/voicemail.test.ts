// Who answered, end to end: agent tasks call baresip phones through Kamailio; each phone plays a
// far end made with espeak-ng (a voicemail greeting with a beep, one without, call-screening
// prompts, a person saying "Hello?") and records what it hears. The record, the task's attempt,
// the call_ended hook and the overview must tell who answered and what the agent did, and a left
// message must be in the phone's recording after the beep, and the call's own recording holds the
// far end's greeting (heard while detection listened) before the message. The greeting goes out at
// the answer (the default) and is withdrawn on a machine; greeting after_verdict keeps it for a
// person's verdict. Both databases.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bestCorrelation, readWav, segmentedCorrelation, writeWav } from '../helpers/audio.ts';
import { startBaresip, type Baresip } from '../helpers/baresip.ts';
import { ADMIN_TOKEN } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { startKamailio, type Kamailio } from '../helpers/kamailio.ts';
import { until } from '../helpers/until.ts';
import { startReceiver, type Receiver } from '../calls/support/receiver.ts';
import { settledTask, startWorld, type World } from '../calls/support/world.ts';
import { startElevenLabsFake, type ElevenLabsFake, type SentSentence } from '../voice/fakes/elevenlabs.ts';
import { startFakeDeepgram, type FakeDeepgram } from '../voice/fakes/deepgram.ts';
import { buildCall, type CallSpec, type CorpusCall } from './support/answering-corpus.ts';
import { alignedInPieces, splitWav } from '../recordings/support.ts';

const XI_KEY = 'xi-test-key-0123456789';
const DG_KEY = 'dg-test-key-0123456789';
const GREETING = 'Hello, this is Parley calling about your order.';
/** A greeting far longer than any verdict takes: a machine's has to be withdrawn. */
const LONG_GREETING = 'Hello, this is Parley calling about your order. It was shipped this morning and should reach you on Thursday. '
  + 'Before it does, we would like to confirm your delivery address and a good time to call. It will only take a minute of your time.';
const MESSAGE = 'Hi {{firstName}}, this is Parley about your order. Please call us back.';
const SCREENER = 'Hi, the person you are calling is using a screening service and will get a copy of this conversation. Go ahead and say your name and why you are calling.';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** The far ends, one phone each: its number, what it plays. */
const FAR_ENDS: Record<string, { number: string; spec: Omit<CallSpec, 'name'> }> = {
  beep: {
    number: '+12125550201',
    spec: { kind: 'voicemail', voice: 'en-us', speed: 160, parts: [{ pause: 300 }, { say: 'Hi, you have reached Anna Smith. Please leave a message after the tone.' }, { pause: 500 }, { beep: { hz: 1000, ms: 400, db: -12 } }, { pause: 12_000 }] },
  },
  noBeep: {
    number: '+12125550202',
    spec: { kind: 'voicemail', voice: 'en-gb+f2', speed: 160, parts: [{ pause: 200 }, { say: 'Hello, this is David. I cannot come to the phone. Leave your name and number.' }, { pause: 12_000 }] },
  },
  screening: {
    number: '+12125550203',
    spec: { kind: 'screening', voice: 'en-us+f3', speed: 165, parts: [{ pause: 300 }, { say: SCREENER }, { pause: 9000 }, { say: 'Hello? This is Anna.' }, { pause: 6500 }, { say: 'Yes, I am listening.' }, { pause: 12_000 }] },
  },
  screeningEnds: {
    number: '+12125550204',
    spec: { kind: 'screening', voice: 'en-us', speed: 165, parts: [{ pause: 300 }, { say: SCREENER }, { pause: 8000 }] },
  },
  person: {
    number: '+12125550205',
    // The person answers 2.5 s in, over the greeting said at the answer.
    spec: { kind: 'human', voice: 'en-gb', speed: 165, parts: [{ pause: 2500 }, { say: 'Hello?' }, { pause: 5000 }, { say: 'Yes, I would like to hear more.' }, { pause: 15_000 }] },
  },
  hangUp: {
    number: '+12125550206',
    spec: { kind: 'voicemail', voice: 'en-us', speed: 160, parts: [{ pause: 300 }, { say: 'Hi, you have reached Anna Smith. Please leave a message after the tone.' }, { pause: 500 }, { beep: { hz: 800, ms: 400, db: -12 } }, { pause: 12_000 }] },
  },
};

/** 10 ms mean absolute levels. */
function envelope(pcm: Int16Array): Float64Array {
  const out = new Float64Array(Math.floor(pcm.length / 80));
  for (let i = 0; i < out.length; i++) {
    let sum = 0;
    for (let k = 0; k < 80; k++) sum += Math.abs(pcm[i * 80 + k]!);
    out[i] = sum / 80;
  }
  return out;
}

/**
 * Where `reference` is in `recording` (ms from its start), and how well it matches there: the
 * place whose 10 ms envelope correlates best (normalised, so a louder stretch of other speech does
 * not win), then the audio helpers' piecewise correlation around it.
 */
function locate(reference: Int16Array, recording: Int16Array): { atMs: number; correlation: number } {
  const a = envelope(reference);
  const b = envelope(recording);
  let best = { score: -1, at: 0 };
  for (let at = 0; at + a.length <= b.length; at++) {
    let ab = 0;
    let aa = 0;
    let bb = 0;
    for (let i = 0; i < a.length; i++) {
      ab += a[i]! * b[at + i]!;
      aa += a[i]! ** 2;
      bb += b[at + i]! ** 2;
    }
    const score = aa && bb ? ab / Math.sqrt(aa * bb) : 0;
    if (score > best.score) best = { score, at };
  }
  const from = Math.max(0, best.at * 80 - 2400);
  const window = recording.subarray(from, best.at * 80 + reference.length + 2400);
  return { atMs: (from + bestCorrelation(reference, window).lag) / 8, correlation: segmentedCorrelation(reference, window) };
}

/**
 * How far (ms) into the far end's file `far` a channel begins (negative: the channel begins
 * before the file plays): the shift whose 10 ms envelopes correlate best, within 5 s either way.
 */
function farEndLag(far: Int16Array, channel: Int16Array): number {
  const a = envelope(far);
  const b = envelope(channel);
  let best = { score: -1, lag: 0 };
  for (let lag = -500; lag <= 500; lag++) {
    let [ab, aa, bb] = [0, 0, 0];
    for (let i = 0; i < a.length; i++) {
      const j = i - lag;
      const y = j >= 0 && j < b.length ? b[j]! : 0;
      ab += a[i]! * y;
      aa += a[i]! ** 2;
      bb += y ** 2;
    }
    const score = aa && bb ? ab / Math.sqrt(aa * bb) : 0;
    if (score > best.score) best = { score, lag };
  }
  return best.lag * 10;
}

/**
 * The phone's recording of what it heard starts with the first packet it got (baresip writes
 * received frames only), so order is judged on the wall clock: the far end's file plays from the
 * phone's CALL_ESTABLISHED on, and none of a sentence can be heard before its text reached the
 * TTS (`requestedAt`). Both sides err towards "too early" (the event reaches the test late), by
 * as much as this test process's event loop lags: order checks that close are left a margin, and
 * the bench times the packets themselves.
 */
const CLOCK_MARGIN_MS = 100;
const farEndAt = (establishedAt: number, sentence: SentSentence) => sentence.requestedAt - establishedAt;

for (const dialect of DIALECTS) {
  describe(`who answered an agent's call (${dialect})`, () => {
    let dir: string;
    let w: World;
    let k: Kamailio;
    let tts: ElevenLabsFake;
    let stt: FakeDeepgram;
    let hooks: Receiver;
    let strategyId: string;
    let credentialId: string;
    const phones = new Map<string, { phone: Baresip; call: CorpusCall }>();
    let agents = 0;

    async function agent(extension: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<string> {
      agents += 1;
      const number = await w.api('POST', `${w.tenant.orgPath}/sip/numbers`, { number: `+1212555001${agents}`, sipCredentialId: credentialId });
      assert.equal(number.status, 201, JSON.stringify(number.body));
      return w.createAssistant({
        name: `Agent ${agents}`, llmAudioContentGenerationStrategyId: strategyId, telephoneNumberId: number.body.data.id, systemPromptGreeting: GREETING,
        systemPrompt: 'You call customers about their orders for Parley.',
        extensions: [{ type: 'voicemail_detection', parameters: extension }, { type: 'end_call', parameters: {} }],
        callEventHooks: [{ type: 'call_ended', parameters: { url: hooks.url.replace('/tools', '/hooks'), secret: SECRET } }],
        ...extra,
      }, 'agents');
    }

    /** Calls `farEnd` for a new task of the agent; answers the settled task, its call record and its attempt. */
    async function callOnce(agentId: string, farEnd: string) {
      const target = FAR_ENDS[farEnd]!.number;
      const created = await w.api('POST', `${w.tenant.orgPath}/agents/${agentId}/tasks`, { targetNumber: target, userValues: { firstName: 'Ada' }, execute: true });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const taskId = created.body.data.id as string;
      const task = await settledTask(w, agentId, taskId, 90_000);
      const attempts = await w.api('GET', `${w.tenant.orgPath}/agents/${agentId}/tasks/${taskId}/attempts`);
      const attempt = attempts.body.data[0];
      assert.ok(attempt?.callId, JSON.stringify(attempts.body));
      const record = (await w.api('GET', `${w.tenant.orgPath}/calls/${attempt.callId}`)).body.data;
      const hook = await until('the call_ended hook', async () => {
        await w.t.app.runner.tick();
        return hooks.requests.find((r) => r.body?.type === 'call_ended' && r.body.data.callId === attempt.callId);
      }, Boolean, 30_000);
      return { task, attempt, record, hook: hook!.body.data, phone: phones.get(farEnd)! };
    }

    /** What the phone heard on its last call, and when that call was established (performance.now()). */
    async function recordings(phone: Baresip) {
      const closed = await phone.waitEvent('CALL_CLOSED', () => true, 40_000);
      const established = phone.events.filter((e) => e.type === 'CALL_ESTABLISHED' && (e.at ?? 0) <= (closed.at ?? 0)).at(-1);
      assert.ok(established?.at, 'the phone said when the call was established');
      const heard = (await readWav((await phone.recordings()).heard)).pcm;
      return { heard, establishedAt: established.at };
    }

    const spoken = (from: number, text: string): SentSentence | undefined => tts.sent.slice(from).find((s) => s.text.trim() === text);

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'parley-voicemail-'));
      tts = await startElevenLabsFake({ apiKey: XI_KEY, voiceId: 'Rachel', modelId: 'eleven_flash_v2_5', outputFormat: 'pcm_8000' });
      stt = await startFakeDeepgram({ apiKey: DG_KEY, model: 'nova-3', language: 'en', idleTimeoutMs: 120_000 });
      hooks = await startReceiver();
      k = await startKamailio({ template: 'proxy', authFrom: '^[+]1212555001' });
      w = await startWorld(dialect, {
        ELEVENLABS_API_KEY: XI_KEY, ELEVENLABS_BASE_URL: tts.url, DEEPGRAM_API_KEY: DG_KEY, DEEPGRAM_BASE_URL: stt.url,
        PARLEY_DIALER: 'sip', PARLEY_SIP_PORT: '0', PARLEY_RTP_PORTS: '25000-25049', PARLEY_RING_SECONDS: '10', PARLEY_RETRY_BASE_SECONDS: '600',
        PARLEY_RECORDINGS_DIR: join(dir, 'recordings'),
      });
      const strategy = await w.api('POST', `${w.tenant.orgPath}/llm-generation-strategies`, {
        name: 'Phone voice', type: 'text_to_speech',
        parameters: { model: 'test-model', outputSampleRate: 8000, voice: { provider: 'elevenlabs', voiceId: 'Rachel', modelId: 'eleven_flash_v2_5' }, vad: { stopDuration: 0.6 }, transcriber: { provider: 'deepgram', model: 'nova-3', language: 'en' } },
      });
      assert.equal(strategy.status, 201, JSON.stringify(strategy.body));
      strategyId = strategy.body.data.id;
      const cred = await w.api('POST', `${w.tenant.orgPath}/sip/credentials`, { name: 'trunk', maxAgentTasks: 2, hostname: '127.0.0.1', port: k.udpPort, transport: 'udp', username: k.username, password: k.password });
      assert.equal(cred.status, 201, JSON.stringify(cred.body));
      credentialId = cred.body.data.id;
      let port = 25100;
      for (const [name, { number, spec }] of Object.entries(FAR_ENDS)) {
        const call = await buildCall(dir, { name, ...spec });
        const source = join(dir, `${name}.wav`);
        await writeWav(source, call.pcm);
        const phone = await startBaresip({ user: number, registrar: { host: '127.0.0.1', port: k.udpPort }, source, rtpPorts: `${port}-${port + 15}` });
        port += 16;
        phones.set(name, { phone, call });
      }
    });
    after(async () => {
      for (const { phone } of phones.values()) await phone.stop();
      await w?.close();
      await k?.stop();
      await Promise.all([tts?.close(), stt?.close(), hooks?.close()]);
      await rm(dir, { recursive: true, force: true });
    });

    it('a voicemail box with a beep: the greeting said at the answer is withdrawn at the verdict; the agent waits for the beep, leaves its message, hangs up; the task is completed; the recording holds the far end\'s greeting', { timeout: 150_000 }, async () => {
      const agentId = await agent({ action: 'leave_message', message: MESSAGE }, { systemPromptGreeting: LONG_GREETING, recording: { enabled: true } });
      const { phone, call } = phones.get('beep')!;
      stt.setTranscripts(call.sentences);
      const ttsFrom = tts.sent.length;
      const llmFrom = w.llm.requests.length;
      const { task, attempt, record, hook } = await callOnce(agentId, 'beep');
      assert.deepEqual([task.status, task.lastError, attempt.outcome], ['COMPLETED', null, 'voicemail_left'], JSON.stringify({ task, attempt }));
      assert.equal(task.conclusionId, record.conclusionId);
      assert.equal(record.answeredBy, 'voicemail');
      assert.deepEqual([record.detection.verdict, record.detection.action, record.endReason], ['voicemail', 'left_message', 'assistant_ended'], JSON.stringify(record.detection));
      const signals = record.detection.signals.map((s: { signal: string }) => s.signal);
      assert.deepEqual(signals.slice(-3), ['beep', 'message_started', 'message_ended'], JSON.stringify(record.detection));
      const withdrawn = record.detection.signals.find((s: { signal: string }) => s.signal === 'greeting_withdrawn');
      assert.equal(withdrawn?.atMs, record.detection.decidedAfterMs, `withdrawn with the verdict: ${JSON.stringify(record.detection)}`);
      assert.equal(signals[1], 'greeting_withdrawn', JSON.stringify(record.detection));
      // The transcript keeps what went out of the greeting, marked cut as a barge-in's cut is, then the message.
      const [cut, left] = record.transcript as { role: string; text: string; interrupted?: boolean; startMs?: number; endMs?: number }[];
      assert.ok(cut && cut.role === 'assistant' && cut.interrupted === true && cut.text.length < LONG_GREETING.length && LONG_GREETING.startsWith(cut.text.slice(0, 20)), JSON.stringify(record.transcript));
      assert.deepEqual([left?.role, left?.text, left?.interrupted], ['assistant', 'Hi Ada, this is Parley about your order. Please call us back.', undefined], JSON.stringify(record.transcript));
      const beep = record.detection.signals.find((s: { signal: string }) => s.signal === 'beep');
      assert.ok(Math.abs(beep.frequencyHz - 1000) <= 25 && beep.durationMs >= 300 && beep.durationMs <= 500, JSON.stringify(beep));
      const started = record.detection.signals.find((s: { signal: string }) => s.signal === 'message_started');
      assert.ok(started.atMs >= beep.atMs + beep.durationMs, 'on the far end\'s own audio clock, the message is asked for after the beep ended');
      assert.equal(hook.answeredBy, 'voicemail');
      assert.equal(w.llm.requests.length, llmFrom, 'the LLM never answered the greeting');
      // The message is in the phone's recording after the part of the greeting sent before the
      // verdict (the phone records the frames it got, without the gaps), and it began after the beep ended.
      const { heard, establishedAt } = await recordings(phone);
      const first = spoken(ttsFrom, 'Hi Ada, this is Parley about your order.');
      assert.ok(first, `the TTS spoke the message: ${JSON.stringify(tts.sent.slice(ttsFrom).map((s) => s.text))}`);
      const found = locate(first.pcm, heard);
      assert.ok(found.correlation >= 0.9, `message at the phone: correlation ${found.correlation.toFixed(3)}`);
      const greeting = spoken(ttsFrom, 'Hello, this is Parley calling about your order.');
      assert.ok(greeting, 'the greeting was spoken');
      const context = `the message at ${JSON.stringify(found)}, the recording ${heard.length / 8} ms; ${JSON.stringify(record.transcript)}`;
      // What came before the message is the greeting's beginning, as long as the transcript says went out.
      assert.ok(found.atMs > 300, context);
      const before = Math.min(greeting.pcm.length, (found.atMs - 100) * 8);
      const greeted = segmentedCorrelation(greeting.pcm.subarray(0, before), heard.subarray(0, before + 1600));
      assert.ok(greeted >= 0.9, `the greeting's beginning first at the phone: correlation ${greeted.toFixed(3)}; ${context}`);
      // Had the greeting gone on, its 15 s would all come before the message.
      assert.ok(Math.abs(found.atMs - (cut.endMs! - cut.startMs!)) < 500, `nothing of the greeting after its cut: ${context}`);
      assert.ok(found.atMs < record.detection.decidedAfterMs + 2500, `nothing of the greeting after the verdict (at ${record.detection.decidedAfterMs} ms): ${context}`);
      const startedAt = farEndAt(establishedAt, first);
      assert.ok(startedAt > call.beep!.endMs - CLOCK_MARGIN_MS, `the message starts after the beep: at ${startedAt.toFixed(0)} ms of the far end's file, the beep ended at ${call.beep!.endMs} ms`);
      assert.ok(startedAt < call.beep!.endMs + 3000, `and soon after it: at ${startedAt.toFixed(0)} ms, the beep ended at ${call.beep!.endMs} ms`);
      const rest = spoken(ttsFrom, 'Please call us back.');
      assert.ok(rest, 'the message\'s second sentence was spoken');
      const after = locate(rest.pcm, heard);
      assert.ok(after.correlation >= 0.9 && after.atMs > found.atMs, `the whole message is on the recording: correlation ${after.correlation.toFixed(3)} at ${after.atMs} ms; the recording lasts ${heard.length / 8} ms, the first sentence ${first.pcm.length / 8} ms from ${found.atMs} ms, the second ${rest.pcm.length / 8} ms`);
      // The call's recording: the far end (left) from the answer, though the voice heard none of it
      // before the verdict; the message (right) after the greeting and the beep, as the phone heard it.
      const stored = await until('the recording to be stored', async () => {
        await w.t.app.runner.tick();
        return (await w.api('GET', `${w.tenant.orgPath}/calls/${record.id}`)).body.data;
      }, (c) => c.recording?.status === 'ready', 30_000);
      const download = await fetch(`${w.address}${w.tenant.orgPath}/calls/${stored.id}/recording`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      assert.equal(download.status, 200);
      const { left: farEnd, right: ours } = splitWav(Buffer.from(await download.arrayBuffer()));
      // Where the far end's file lies on the left channel (its 10 ms envelope over the greeting and
      // the beep), then the greeting's last seconds there piece by piece (its first words may come
      // before the voice opened: the call's setup is read after the answer), as for all RTP speech.
      const lagMs = farEndLag(call.pcm.subarray(0, (call.beep!.endMs + 200) * 8), farEnd);
      const tailFromMs = Math.max(call.speechStartMs, call.beep!.startMs - 2500);
      const tail = alignedInPieces(call.pcm.subarray(tailFromMs * 8, call.beep!.startMs * 8), farEnd, 8000, tailFromMs - lagMs, { toleranceMs: 60, pieceMs: 200, follow: true, leaveOut: 0.25 });
      assert.ok(tail.ncc >= 0.8, `the far end's greeting is on the left channel ${-lagMs} ms from the file's start: NCC ${tail.ncc.toFixed(3)} (${tail.pieces})`);
      const beepEndAt = call.beep!.endMs - lagMs;
      const messageAt = locate(first.pcm, ours);
      assert.ok(messageAt.correlation >= 0.9, `the message is on the right channel: correlation ${messageAt.correlation.toFixed(3)}`);
      assert.ok(messageAt.atMs > beepEndAt - CLOCK_MARGIN_MS && messageAt.atMs < beepEndAt + 3000, `the message follows the beep's end on the recording as at the phone: at ${messageAt.atMs} ms, the beep ended at ${beepEndAt} ms`);
    });

    it('greeting after_verdict, a voicemail box without a beep: nothing is said before the verdict, and the message starts once the greeting is over', { timeout: 150_000 }, async () => {
      const agentId = await agent({ action: 'leave_message', message: MESSAGE, greeting: 'after_verdict' });
      const { phone, call } = phones.get('noBeep')!;
      stt.setTranscripts(call.sentences);
      const ttsFrom = tts.sent.length;
      const { task, attempt, record, hook } = await callOnce(agentId, 'noBeep');
      assert.deepEqual([task.status, attempt.outcome, record.answeredBy, hook.answeredBy], ['COMPLETED', 'voicemail_left', 'voicemail', 'voicemail'], JSON.stringify({ task, attempt }));
      const signals = record.detection.signals.map((s: { signal: string }) => s.signal);
      assert.equal(signals[0], 'voicemail_words', JSON.stringify(record.detection));
      assert.deepEqual(signals.slice(-3), ['greeting_ended', 'message_started', 'message_ended'], JSON.stringify(record.detection));
      assert.equal(record.detection.action, 'left_message');
      assert.ok(!signals.includes('greeting_withdrawn') && !tts.sent.slice(ttsFrom).some((s) => s.text.trim() === GREETING), 'no greeting to a machine');
      assert.deepEqual(record.transcript.map((e: { text: string }) => e.text), ['Hi Ada, this is Parley about your order. Please call us back.']);
      const { heard, establishedAt } = await recordings(phone);
      const first = spoken(ttsFrom, 'Hi Ada, this is Parley about your order.');
      assert.ok(first);
      const found = locate(first.pcm, heard);
      assert.ok(found.correlation >= 0.9 && found.atMs < 200, `message first at the phone: correlation ${found.correlation.toFixed(3)} at ${found.atMs} ms`);
      const startedAt = farEndAt(establishedAt, first);
      assert.ok(startedAt > call.soundEndMs + 1000, `the message waits for the silence after the greeting: at ${startedAt.toFixed(0)} ms, the greeting ended at ${call.soundEndMs} ms`);
    });

    it('a voicemail box with hang_up: the agent hangs up at once, and the task is tried again', { timeout: 150_000 }, async () => {
      const agentId = await agent({ action: 'hang_up' }, { systemPromptGreeting: LONG_GREETING });
      const { phone, call } = phones.get('hangUp')!;
      stt.setTranscripts(call.sentences);
      const { task, attempt, record, hook } = await callOnce(agentId, 'hangUp');
      assert.deepEqual([task.status, task.lastError, attempt.outcome], ['SCHEDULED', 'attempt 1: voicemail, no message left', 'voicemail'], JSON.stringify({ task, attempt }));
      assert.ok(task.nextAttemptAt, 'retried like no answer');
      assert.deepEqual([record.answeredBy, record.detection.action, record.endReason, hook.answeredBy], ['voicemail', 'hung_up', 'assistant_ended', 'voicemail']);
      // Our BYE came long before the phone's file (and its beep) ended.
      const closed = await phone.waitEvent('CALL_CLOSED', () => true, 20_000);
      assert.ok(closed);
      assert.ok(record.detection.decidedAfterMs < call.beep!.startMs, JSON.stringify(record.detection));
      assert.ok(record.detection.signals.some((s: { signal: string }) => s.signal === 'greeting_withdrawn'), JSON.stringify(record.detection));
      assert.deepEqual(record.transcript.map((e: { role: string; interrupted?: boolean }) => [e.role, e.interrupted]), [['assistant', true]], 'the greeting, cut');
    });

    it('greeting after_verdict, a screening assistant: the agent gives its name and reason, then greets and talks with the person who picks up', { timeout: 150_000 }, async () => {
      const agentId = await agent({ action: 'leave_message', message: MESSAGE, greeting: 'after_verdict' });
      const { phone, call } = phones.get('screening')!;
      stt.setTranscripts([...call.sentences.slice(0, 2), 'Hello?', 'This is Anna.', 'Yes, I am listening.']);
      const ttsFrom = tts.sent.length;
      const llmFrom = w.llm.requests.length;
      w.llm.respond = () => ({ toolCalls: [{ id: 'call_end', name: 'end_call', arguments: JSON.stringify({ message: 'Thank you, goodbye.' }) }] });
      const { task, attempt, record, hook } = await callOnce(agentId, 'screening');
      assert.deepEqual([task.status, attempt.outcome, record.answeredBy, hook.answeredBy], ['COMPLETED', 'completed', 'screening', 'screening'], JSON.stringify({ task, attempt, detection: record.detection }));
      const signals = record.detection.signals.map((s: { signal: string }) => s.signal);
      assert.deepEqual(signals, ['screening_words', 'prompt_ended', 'screening_answered', 'person_answered'], JSON.stringify(record.detection));
      assert.equal(record.detection.action, 'continued');
      assert.ok(w.llm.requests.length > llmFrom, 'the person was talked with');
      const { heard, establishedAt } = await recordings(phone);
      const answer = tts.sent.slice(ttsFrom).find((s) => s.text.startsWith(`This is Agent ${agents}.`));
      assert.ok(answer, `the screener was told the agent's name: ${JSON.stringify(tts.sent.slice(ttsFrom).map((s) => s.text))}`);
      const answered = locate(answer.pcm, heard);
      assert.ok(answered.correlation >= 0.9 && answered.atMs < 200, `answer first at the phone: correlation ${answered.correlation.toFixed(3)} at ${answered.atMs} ms`);
      const answeredAt = farEndAt(establishedAt, answer);
      assert.ok(answeredAt > call.firstSpeechEndMs, `the answer follows the prompt: at ${answeredAt.toFixed(0)} ms, the prompt ended at ${call.firstSpeechEndMs} ms`);
      const greeting = spoken(ttsFrom, GREETING);
      assert.ok(greeting, 'the person was greeted');
      const greeted = locate(greeting.pcm, heard);
      const pickedUp = call.firstSpeechEndMs + 9000; // the prompt, then the pause before the person's words
      assert.ok(greeted.correlation >= 0.9 && farEndAt(establishedAt, greeting) > pickedUp, `greeted (correlation ${greeted.correlation.toFixed(3)}) once the person spoke, after ${pickedUp} ms: ${JSON.stringify(record.transcript.map((e: any) => [e.role, e.text, e.interrupted]))}`);
    });

    it('a screening assistant that ends the call: voicemail, no message left, and the LLM wrote the answer from the prompt', { timeout: 150_000 }, async () => {
      const agentId = await agent({ action: 'hang_up' });
      const { call } = phones.get('screeningEnds')!;
      stt.setTranscripts(call.sentences);
      const llmFrom = w.llm.requests.length;
      w.llm.respond = () => ({ text: `This is Agent ${agents} from Parley, calling about an order.` });
      const { task, attempt, record, hook } = await callOnce(agentId, 'screeningEnds');
      assert.deepEqual([task.status, task.lastError, attempt.outcome], ['SCHEDULED', 'attempt 1: voicemail, no message left', 'voicemail'], JSON.stringify({ task, attempt }));
      assert.deepEqual([record.answeredBy, record.detection.action, record.endReason, hook.answeredBy], ['screening', 'ended_early', 'client_ended', 'screening'], JSON.stringify(record.detection));
      const asked = w.llm.requests.slice(llmFrom).map((r) => r.messages.at(-1).content as string);
      assert.equal(asked.length, 1, 'one LLM round for the screening answer, none for the greeting');
      assert.match(asked[0]!, new RegExp(`Agent ${agents}`));
      assert.match(asked[0]!, /screening service/);
      assert.equal(w.llm.requests[llmFrom].messages[0].content, 'You call customers about their orders for Parley.');
    });

    it('a person hears the greeting from the answer; their "Hello?" over it reaches neither the LLM nor the greeting, and the call goes on as before', { timeout: 150_000 }, async () => {
      const agentId = await agent({ action: 'hang_up' });
      const { phone, call } = phones.get('person')!;
      stt.setTranscripts(['Hello?', 'Yes, I would like to hear more.']);
      const ttsFrom = tts.sent.length;
      const llmFrom = w.llm.requests.length;
      w.llm.respond = () => ({ toolCalls: [{ id: 'call_end', name: 'end_call', arguments: JSON.stringify({ message: 'Wonderful, we will send it. Goodbye.' }) }] });
      const { task, attempt, record, hook } = await callOnce(agentId, 'person');
      assert.deepEqual([task.status, attempt.outcome, record.answeredBy, hook.answeredBy], ['COMPLETED', 'completed', 'human', 'human'], JSON.stringify({ task, detection: record.detection }));
      assert.deepEqual(record.detection.signals.map((s: { signal: string }) => s.signal), ['short_answer']);
      assert.equal(record.detection.action, 'continued');
      assert.ok(record.detection.decidedAfterMs < call.speechStartMs + 2500, JSON.stringify(record.detection));
      assert.deepEqual(w.llm.requests[llmFrom]?.messages.at(-1), { role: 'user', content: 'Yes, I would like to hear more.' }, 'the person\'s words after the greeting reached the LLM');
      const [greetingEntry, said] = record.transcript as { role: string; text: string; startMs?: number; interrupted?: boolean }[];
      assert.deepEqual([greetingEntry?.role, greetingEntry?.text, greetingEntry?.interrupted, said?.role], ['assistant', GREETING, undefined, 'user'], JSON.stringify(record.transcript));
      // Greeted from the answer: the greeting's audio began before the verdict (which waited for "Hello?", 2.5 s in, and its pause).
      assert.ok(greetingEntry!.startMs! < record.detection.decidedAfterMs, `the greeting started at ${greetingEntry!.startMs} ms, the verdict came at ${record.detection.decidedAfterMs} ms`);
      assert.ok(record.detection.decidedAfterMs > call.speechStartMs, JSON.stringify(record.detection));
      const { heard } = await recordings(phone);
      const greeting = spoken(ttsFrom, GREETING);
      assert.ok(greeting);
      const greeted = locate(greeting.pcm, heard);
      assert.ok(greeted.correlation >= 0.9 && greeted.atMs < 200, `greeting first at the phone: correlation ${greeted.correlation.toFixed(3)} at ${greeted.atMs} ms`);
    });

    it('the overview counts the calls by who answered them', { timeout: 30_000 }, async () => {
      const overview = await w.api('GET', `${w.tenant.orgPath}/analytics/overview`);
      assert.equal(overview.status, 200, JSON.stringify(overview.body));
      // Summed over the days: the calls may end on both sides of midnight UTC.
      const total = { human: 0, voicemail: 0, screening: 0, unknown: 0 };
      for (const day of overview.body.data.answeredByPerDay) for (const key of Object.keys(total) as (keyof typeof total)[]) total[key] += day[key];
      assert.deepEqual(total, { human: 1, voicemail: 3, screening: 2, unknown: 0 });
    });
  });
}
