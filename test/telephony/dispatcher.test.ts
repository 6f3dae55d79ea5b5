// Scale-out on a real SIP edge: Kamailio with the dispatcher module (running
// docs/kamailio/dispatcher.cfg, the file the docs tell operators to start from) in front of
// two `parley serve` processes sharing one database, rtpengine on the media path. Calls from a
// baresip phone land on the processes in turn, with the greeting intact through rtpengine;
// once one process is stopped and the dispatcher's OPTIONS probes have marked it down, every
// new call lands on the other. Once, on the first dialect: the database only carries the
// records here, and the inbound bookkeeping runs on both dialects in inbound.test.ts.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN_TOKEN, buildTestApp, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { readWav, segmentedCorrelation, writeWav } from '../helpers/audio.ts';
import { startBaresip, type Baresip } from '../helpers/baresip.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { freeUdpPort, startKamailio, type Kamailio } from '../helpers/kamailio.ts';
import { startRtpEngine, type RtpEngine } from '../helpers/rtpengine.ts';
import { freePort, kill, startService, type ServiceProcess } from '../helpers/service-process.ts';
import { startLlmServer, type LlmServer } from '../calls/support/llm-server.ts';
import { startElevenLabsFake, type ElevenLabsFake } from '../voice/fakes/elevenlabs.ts';
import { startFakeDeepgram, type FakeDeepgram } from '../voice/fakes/deepgram.ts';
import { until } from '../helpers/until.ts';

const XI_KEY = 'xi-test-key-0123456789';
const DG_KEY = 'dg-test-key-0123456789';
const VOICE = { provider: 'elevenlabs', voiceId: 'Rachel', modelId: 'eleven_flash_v2_5', stability: 0.4, similarityBoost: 0.8, style: 0.1, useSpeakerBoost: true, speed: 1.1 };
const GREETING = 'Hello, you have reached Parley, how can I help you today?';
const NUMBER = '+12125550100';
const PHONE = '+12125550101';
const dialect = DIALECTS[0] ?? 'sqlite';


describe(`two Parley processes behind Kamailio's dispatcher, with rtpengine (${dialect})`, () => {
  let dir: string;
  let t: TestApp;
  let tenant: Tenant;
  let llm: LlmServer;
  let tts: ElevenLabsFake;
  let stt: FakeDeepgram;
  let rtpengine: RtpEngine;
  let k: Kamailio;
  let phone: Baresip;
  const services: { name: string; sipPort: number; process: ServiceProcess }[] = [];

  /** The dispatcher's flags for a process (A active, I inactive, P probing). */
  async function flags(sipPort: number): Promise<string> {
    const list = await k.rpc('dispatcher.list');
    return new RegExp(`URI: sip:127\\.0\\.0\\.1:${sipPort}\\s+FLAGS: (\\w+)`).exec(list)?.[1] ?? '';
  }

  /** Calls the number from the phone; answers which process took it, once it has. */
  async function call(): Promise<{ id: string; took: string }> {
    const dial = await phone.command('dial', `sip:${NUMBER}@127.0.0.1:${k.udpPort}`);
    assert.ok(dial.ok, dial.data);
    const rows = await until('an answered call', () => t.db.kysely.selectFrom('calls').select(['id', 'lease_owner']).where('status', '=', 'active').execute(), (r) => r.length === 1);
    const row = rows[0]!;
    const took = services.find((s) => row.lease_owner?.includes(`:${s.process.child.pid}:`));
    assert.ok(took, `held by ${row.lease_owner}`);
    return { id: row.id, took: took.name };
  }

  async function hangUp(id: string): Promise<void> {
    await phone.waitEvent('CALL_ESTABLISHED');
    phone.events.length = 0;
    assert.ok((await phone.command('hangup')).ok);
    await phone.waitEvent('CALL_CLOSED');
    await until('the call ended', () => t.db.kysely.selectFrom('calls').select('status').where('id', '=', id).executeTakeFirstOrThrow(), (r) => r.status === 'ended');
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parley-dispatcher-'));
    llm = await startLlmServer();
    llm.respond = () => ({ text: 'Thank you.' });
    tts = await startElevenLabsFake({
      apiKey: XI_KEY, voiceId: 'Rachel', modelId: 'eleven_flash_v2_5', outputFormat: 'pcm_8000',
      voiceSettings: { stability: 0.4, similarity_boost: 0.8, style: 0.1, use_speaker_boost: true, speed: 1.1 },
    });
    stt = await startFakeDeepgram({ apiKey: DG_KEY, model: 'nova-3', language: 'en' });
    t = await buildTestApp(dialect, { PARLEY_EGRESS_ALLOW: '127.0.0.0/8' });
    tenant = await createTenant(t);
    rtpengine = await startRtpEngine({ min: 22180, max: 22199 });
    const env = {
      PARLEY_EGRESS_ALLOW: '127.0.0.0/8', DATABASE_URL: t.database.url, PARLEY_ADMIN_TOKEN: ADMIN_TOKEN, PARLEY_SECRET_KEY: t.config.secretKey.toString('base64'),
      OPENAI_BASE_URL: llm.baseUrl, OPENAI_API_KEY: 'test', ELEVENLABS_API_KEY: XI_KEY, ELEVENLABS_BASE_URL: tts.url, DEEPGRAM_API_KEY: DG_KEY, DEEPGRAM_BASE_URL: stt.url,
      PARLEY_DIALER: 'sip', PARLEY_SIP_HOST: '127.0.0.1',
    };
    for (const [name, rtp] of [['A', '22150-22159'], ['B', '22160-22169']] as const) {
      const sipPort = await freeUdpPort();
      // Two service processes compile their sources at start: on a loaded machine that takes a while.
      const process = await startService({ ...env, PORT: String(await freePort()), PARLEY_SIP_PORT: String(sipPort), PARLEY_RTP_PORTS: rtp }, { startTimeoutMs: 60_000 });
      services.push({ name, sipPort, process });
    }
    k = await startKamailio({
      config: new URL('../../docs/kamailio/dispatcher.cfg', import.meta.url),
      files: { 'dispatcher.list': new URL('../../docs/kamailio/dispatcher.list', import.meta.url) },
      values: { RTPENGINE_NG: rtpengine.ng, PARLEY_A_PORT: String(services[0]!.sipPort), PARLEY_B_PORT: String(services[1]!.sipPort) },
    });
    // The numbers' credentials name Kamailio: calls to them come from its address.
    const api = async (path: string, body: unknown) => {
      const res = await t.call('POST', `${tenant.orgPath}${path}`, { body });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().data.id as string;
    };
    const credentialId = await api('/sip/credentials', { name: 'Edge', hostname: '127.0.0.1', port: k.udpPort, username: 'edge', password: 'unused', maxAgentTasks: 4 });
    const numberId = await api('/sip/numbers', { number: NUMBER, sipCredentialId: credentialId });
    const strategyId = await api('/llm-generation-strategies', {
      name: 'Phone voice', type: 'text_to_speech',
      parameters: { model: 'test-model', outputSampleRate: 8000, voice: VOICE, vad: { stopDuration: 0.6 }, transcriber: { provider: 'deepgram', model: 'nova-3', language: 'en' } },
    });
    await api('/assistants', { name: 'Front desk', llmAudioContentGenerationStrategyId: strategyId, telephoneNumberId: numberId, systemPromptGreeting: GREETING });
    const source = join(dir, 'silence.wav');
    await writeWav(source, new Int16Array(8000 * 7));
    phone = await startBaresip({ user: PHONE, source, rtpPorts: '22170-22179' });
  });
  after(async () => {
    await phone?.stop();
    await k?.stop();
    await Promise.all(services.map((s) => kill(s.process.child)));
    await rtpengine?.stop();
    await t?.close();
    await Promise.all([llm?.close(), tts?.close(), stt?.close()]);
    await rm(dir, { recursive: true, force: true });
  });

  it('spreads calls over both processes in turn with the audio intact, and sends every call to the other once one is stopped', { timeout: 120_000 }, async (ctx) => {
    for (const s of services) await until(`process ${s.name} probed active`, () => flags(s.sipPort), (f) => f.startsWith('A'));

    // The first call runs until the phone's file ends: it heard the greeting through rtpengine.
    const ttsFrom = tts.sent.length;
    const first = await call();
    assert.equal(await rtpengine.calls(), 1, 'the media goes through rtpengine');
    await phone.waitEvent('CALL_CLOSED', undefined, 30_000);
    const greeting = tts.sent[ttsFrom];
    assert.equal(greeting?.text.trim(), GREETING);
    const heard = (await readWav((await phone.recordings()).heard)).pcm;
    const correlation = segmentedCorrelation(greeting.pcm, heard);
    assert.ok(correlation >= 0.9, `greeting at the phone through rtpengine: correlation ${correlation.toFixed(3)}`);
    ctx.diagnostic(`greeting at the phone through rtpengine: correlation ${correlation.toFixed(3)}`);
    await until('the first call ended', () => t.db.kysely.selectFrom('calls').select('status').where('id', '=', first.id).executeTakeFirstOrThrow(), (r) => r.status === 'ended');

    phone.events.length = 0;
    const second = await call();
    await hangUp(second.id);
    assert.notEqual(second.took, first.took, 'round robin: the second call went to the other process');

    // Stop the process that took the second call; the probes mark it down.
    const stopped = services.find((s) => s.name === second.took)!;
    const left = services.find((s) => s !== stopped)!;
    await kill(stopped.process.child);
    await until(`process ${stopped.name} probed inactive`, () => flags(stopped.sipPort), (f) => f.startsWith('I'));
    for (let i = 0; i < 2; i++) {
      const next = await call();
      assert.equal(next.took, left.name, `call ${i + 3} went to the process still running`);
      await hangUp(next.id);
    }
  });
});
