// The SIP dialer end to end: a task's call goes out through Kamailio (the trunk, digest on the
// INVITE) to baresip, which auto-answers, plays espeak-ng speech after a pause and records
// what it hears; the agent's voice pipeline (fake ElevenLabs and Deepgram servers) is on the
// RTP. SQLite only: the database plays no part in the media path these tests are about, and
// the task and call bookkeeping they rely on is tested on both dialects elsewhere.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { readWav, segmentedCorrelation, speechWav, writeWav } from '../helpers/audio.ts';
import { startBaresip, type Baresip } from '../helpers/baresip.ts';
import { toolSchema } from '../helpers/fixtures.ts';
import { startKamailio, type Kamailio } from '../helpers/kamailio.ts';
import { startSipp } from '../helpers/sipp.ts';
import { startReceiver, type Receiver } from '../calls/support/receiver.ts';
import { settledTask, startWorld, type World } from '../calls/support/world.ts';
import { startElevenLabsFake, type ElevenLabsFake } from '../voice/fakes/elevenlabs.ts';
import { startFakeDeepgram, type FakeDeepgram } from '../voice/fakes/deepgram.ts';
import { sox } from '../voice/support/speech.ts';

const XI_KEY = 'xi-test-key-0123456789';
const DG_KEY = 'dg-test-key-0123456789';
const VOICE = { provider: 'elevenlabs', voiceId: 'Rachel', modelId: 'eleven_flash_v2_5', stability: 0.4, similarityBoost: 0.8, style: 0.1, useSpeakerBoost: true, speed: 1.1 };
const GREETING = 'Hello, this is Parley calling about your order.';
const ANSWER = 'Yes, order A seventeen. When does it arrive?';
const LAST = 'It arrives tomorrow, thank you and goodbye.';
/** JSON columns: text on SQLite, parsed on PostgreSQL. */
const json = (v: unknown): any => (typeof v === 'string' ? JSON.parse(v) : v);
const AGENT_NUMBER = '+12125550001';
const PHONE = '+12125550101';

describe('the SIP dialer places task calls (sqlite)', () => {
  let dir: string;
  let w: World;
  let k: Kamailio;
  let tts: ElevenLabsFake;
  let stt: FakeDeepgram;
  let receiver: Receiver;
  let strategyId: string;
  let phone: Baresip | null = null;
  let said: Int16Array;
  let n = 0;

  /** Credentials to `trunk`, a number on them and an agent with that number: what a task calls through. */
  async function agentVia(trunk: { hostname: string; port: number; transport?: string; username: string; password: string }, extra: Record<string, unknown> = {}): Promise<string> {
    n += 1;
    const cred = await w.api('POST', `${w.tenant.orgPath}/sip/credentials`, { name: `trunk ${n}`, maxAgentTasks: 2, ...trunk });
    assert.equal(cred.status, 201, JSON.stringify(cred.body));
    const number = await w.api('POST', `${w.tenant.orgPath}/sip/numbers`, { number: `${AGENT_NUMBER.slice(0, -1)}${n}`, sipCredentialId: cred.body.data.id });
    assert.equal(number.status, 201, JSON.stringify(number.body));
    return w.createAssistant({ name: `Agent ${n}`, llmAudioContentGenerationStrategyId: strategyId, telephoneNumberId: number.body.data.id, ...extra }, 'agents');
  }

  async function task(agentId: string, targetNumber = PHONE): Promise<string> {
    const res = await w.api('POST', `${w.tenant.orgPath}/agents/${agentId}/tasks`, { targetNumber });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const run = await w.api('POST', `${w.tenant.orgPath}/agents/${agentId}/tasks/${res.body.data.id}/execute`);
    assert.equal(run.body.data?.status, 'SCHEDULED', JSON.stringify(run.body));
    return res.body.data.id;
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parley-dialer-'));
    tts = await startElevenLabsFake({
      apiKey: XI_KEY, voiceId: 'Rachel', modelId: 'eleven_flash_v2_5', outputFormat: 'pcm_8000',
      voiceSettings: { stability: 0.4, similarity_boost: 0.8, style: 0.1, use_speaker_boost: true, speed: 1.1 },
    });
    stt = await startFakeDeepgram({ apiKey: DG_KEY, model: 'nova-3', language: 'en' });
    receiver = await startReceiver();
    k = await startKamailio({ template: 'proxy', authFrom: '^[+]1212555000' });
    w = await startWorld('sqlite', {
      ELEVENLABS_API_KEY: XI_KEY, ELEVENLABS_BASE_URL: tts.url, DEEPGRAM_API_KEY: DG_KEY, DEEPGRAM_BASE_URL: stt.url,
      PARLEY_DIALER: 'sip', PARLEY_SIP_PORT: '0', PARLEY_RTP_PORTS: '21000-21049', PARLEY_RING_SECONDS: '2',
      PARLEY_RETRY_BASE_SECONDS: '600',
    });
    const strategy = await w.api('POST', `${w.tenant.orgPath}/llm-generation-strategies`, {
      name: 'Phone voice', type: 'text_to_speech',
      parameters: { model: 'test-model', outputSampleRate: 8000, voice: VOICE, vad: { stopDuration: 0.6 }, transcriber: { provider: 'deepgram', model: 'nova-3', language: 'en' } },
    });
    assert.equal(strategy.status, 201, JSON.stringify(strategy.body));
    strategyId = strategy.body.data.id;
    // The phone waits out the greeting, answers, then stays silent on the line until the agent hangs up
    // (it would hang up itself when its file ends, long after).
    const speech = await speechWav(dir, 'answer', ANSWER);
    said = speech.pcm;
    const pause = (s: number) => new Int16Array(8000 * s);
    const source = join(dir, 'phone.wav');
    await writeWav(source, Int16Array.from([...pause(4), ...said, ...pause(20)]));
    phone = await startBaresip({ user: PHONE, registrar: { host: '127.0.0.1', port: k.udpPort }, source, rtpPorts: '21100-21149' });
  });
  after(async () => {
    await phone?.stop();
    await w?.close();
    await k?.stop();
    await Promise.all([tts?.close(), stt?.close(), receiver?.close()]);
    await rm(dir, { recursive: true, force: true });
  });

  it('calls the phone through the trunk: it hears the greeting, the STT hears it, a tool sees both numbers, a key press reaches the LLM, end_call hangs up, the task completes', { timeout: 90_000 }, async () => {
    const agentId = await agentVia({ hostname: '127.0.0.1', port: k.udpPort, transport: 'udp', username: k.username, password: k.password }, {
      systemPromptGreeting: GREETING,
      extensions: [
        { type: 'tool_webhook', parameters: { name: 'lookup_order', serverUrl: `${receiver.url}/tools`, schema: toolSchema('lookup_order') } },
        { type: 'end_call', parameters: {} },
      ],
    });
    stt.setTranscript(ANSWER);
    const llmFrom = w.llm.requests.length;
    w.llm.respond = (_body, index) => index === 0
      ? { toolCalls: [{ id: 'call_1', name: 'lookup_order', arguments: '{"orderNumber":"A-17"}' }] }
      : index === 1 ? { text: 'It arrives tomorrow.' }
        : index === 2 ? { toolCalls: [{ id: 'call_2', name: 'end_call', arguments: JSON.stringify({ message: LAST }) }] }
          : { text: 'This must never be said.' };
    const ttsFrom = tts.sent.length;
    const taskId = await task(agentId);
    // Once the agent has answered, the phone presses 4 (RFC 4733 through Kamailio); the LLM reads it and hangs up.
    const until = performance.now() + 40_000;
    while (w.llm.requests.length < llmFrom + 2) {
      if (performance.now() > until) throw new Error(`the LLM was asked ${w.llm.requests.length - llmFrom} times`);
      await w.t.app.runner.tick();
      await sleep(50);
    }
    const pressed = await phone!.command('sndcode', '4');
    assert.ok(pressed.ok, pressed.data);
    const done = await settledTask(w, agentId, taskId, 60_000);
    assert.equal(done.status, 'COMPLETED', JSON.stringify(done));
    assert.ok(done.conclusionId, 'the task keeps the call conclusion');

    const call = await w.t.ctx.db.kysely.selectFrom('calls').selectAll().where('task_id', '=', taskId).executeTakeFirstOrThrow();
    assert.equal(call.conclusion_id, done.conclusionId);
    assert.equal(call.end_reason, 'assistant_ended', 'the agent hung up with end_call');
    assert.equal(w.llm.requests.length, llmFrom + 3, 'the LLM is not asked again after end_call');
    assert.deepEqual(w.llm.requests[llmFrom + 2].messages.at(-1), { role: 'user', content: 'the caller pressed 4' }, 'the key reached the LLM as text');
    const entries = await w.t.ctx.db.kysely.selectFrom('call_entries').select(['kind', 'text']).where('call_id', '=', call.id).where('kind', '=', 'dtmf').execute();
    assert.deepEqual(entries, [{ kind: 'dtmf', text: '4' }]);
    // Our BYE reached the phone (its file still had 20 s of silence to play).
    await phone!.waitEvent('CALL_CLOSED', () => true, 10_000);
    assert.deepEqual(json(call.transport), { type: 'sip', calledNumber: PHONE, callingNumber: `${AGENT_NUMBER.slice(0, -1)}${n}` });
    assert.deepEqual(json(call.audio), { encoding: 'mulaw', sampleRate: 8000 });
    // The call's read shape carries the RTP and RTCP figures of both directions.
    const read = await w.api('GET', `${w.tenant.orgPath}/calls/${call.id}`);
    assert.equal(read.status, 200, JSON.stringify(read.body));
    assert.deepEqual([read.body.data.taskId, read.body.data.agentId, read.body.data.assistantId], [taskId, agentId, null], 'a task call names its task and agent');
    const { media } = read.body.data;
    assert.deepEqual(media, json(call.media));
    assert.ok(media.packetsSent > 50 && media.packetsReceived > 200, JSON.stringify(media));
    assert.ok(media.packetsLost >= 0 && media.packetsLost < media.packetsReceived / 10 && media.jitterMs >= 0, JSON.stringify(media));
    // baresip reports on our stream every few seconds: the call lasts longer than that.
    assert.ok(media.remote && media.remote.fractionLost >= 0 && media.remote.jitterMs >= 0, JSON.stringify(media));

    // The phone heard the greeting as the TTS made it, through mu-law both ways.
    const greeting = tts.sent[ttsFrom];
    assert.equal(greeting?.text.trim(), GREETING);
    const heard = (await readWav((await phone!.recordings()).heard)).pcm;
    const toPhone = segmentedCorrelation(greeting.pcm, heard);
    assert.ok(toPhone >= 0.9, `greeting at the phone: correlation ${toPhone.toFixed(3)}`);
    // And end_call's last sentence, before the BYE closed its recording.
    const last = tts.sent.slice(ttsFrom).find((s) => s.text.trim() === LAST);
    assert.ok(last, `the TTS spoke the last sentence: ${JSON.stringify(tts.sent.slice(ttsFrom).map((s) => s.text))}`);
    const lastHeard = segmentedCorrelation(last.pcm, heard);
    assert.ok(lastHeard >= 0.9, `last sentence at the phone: correlation ${lastHeard.toFixed(3)}`);

    // The STT got the phone's speech intact (16 kHz linear16; the reference resampled the same way).
    const reference = await sox(Buffer.from(said.buffer, said.byteOffset, said.byteLength), { encoding: 'pcm_s16le', sampleRate: 16000 }, { encoding: 'pcm_s16le', sampleRate: 8000 });
    const fromPhone = segmentedCorrelation(new Int16Array(reference.buffer, reference.byteOffset, reference.length / 2), stt.receivedAudio());
    assert.ok(fromPhone >= 0.9, `the phone at the STT: correlation ${fromPhone.toFixed(3)}`);

    // The tool's webhook names both numbers.
    assert.equal(receiver.requests.length, 1);
    assert.deepEqual(receiver.requests[0]?.body.transport, { type: 'sip', calledNumber: PHONE, callingNumber: `${AGENT_NUMBER.slice(0, -1)}${n}` });
  });

  const refusals: [number, string, string, string][] = [
    [486, 'Busy Here', 'SCHEDULED', 'busy (SIP 486)'],
    [600, 'Busy Everywhere', 'SCHEDULED', 'busy (SIP 600)'],
    [603, 'Decline', 'FAILED', 'declined (SIP 603)'],
    [404, 'Not Found', 'FAILED', 'invalid number (SIP 404)'],
    [480, 'Temporarily Unavailable', 'SCHEDULED', 'no answer (SIP 480)'],
    [503, 'Service Unavailable', 'SCHEDULED', 'the trunk refused the call: Service Unavailable (SIP 503)'],
  ];
  for (const [status, reason, taskStatus, lastError] of refusals) {
    it(`maps ${status} ${reason} to ${taskStatus}: "${lastError}"`, { timeout: 30_000 }, async () => {
      const sipp = await startSipp({ scenario: 'uas-reject.xml', vars: { STATUS: String(status), REASON: reason } });
      try {
        const agentId = await agentVia({ hostname: '127.0.0.1', port: sipp.port, username: 'trunk', password: 'secret' });
        const done = await settledTask(w, agentId, await task(agentId));
        assert.equal(done.status, taskStatus, JSON.stringify(done));
        assert.equal(done.lastError, `attempt 1: ${lastError}`);
        if (taskStatus === 'SCHEDULED') assert.ok(done.nextAttemptAt, 'a retry is planned');
        assert.equal((await sipp.done).code, 0, 'sipp saw the ACK');
      } finally {
        await sipp.stop();
      }
    });
  }

  it('gives up after PARLEY_RING_SECONDS with CANCEL: no answer, retried', { timeout: 30_000 }, async () => {
    const sipp = await startSipp({ scenario: 'uas-ring.xml' });
    try {
      const agentId = await agentVia({ hostname: '127.0.0.1', port: sipp.port, username: 'trunk', password: 'secret' });
      const done = await settledTask(w, agentId, await task(agentId));
      assert.equal(done.status, 'SCHEDULED', JSON.stringify(done));
      assert.match(done.lastError, /^attempt 1: no answer/);
      assert.equal((await sipp.done).code, 0, 'sipp got the CANCEL and the ACK of its 487');
    } finally {
      await sipp.stop();
    }
  });

  it('an unreachable trunk is a retryable failure', { timeout: 30_000 }, async () => {
    // TCP to a port nobody listens on: refused at once.
    const agentId = await agentVia({ hostname: '127.0.0.1', port: 9, transport: 'tcp', username: 'trunk', password: 'secret' });
    const done = await settledTask(w, agentId, await task(agentId));
    assert.equal(done.status, 'SCHEDULED', JSON.stringify(done));
    assert.match(done.lastError, /^attempt 1: the trunk could not be reached/);
  });
});
