// Calls to a SIP number, end to end: Parley registers with Kamailio (the trunk) as the stored
// credentials ask, Kamailio delivers calls to the number to that registration, and the
// number's assistant answers with its voice pipeline (fake ElevenLabs and Deepgram servers) on
// the RTP. baresip is the phone for the audio (once, on SQLite); sipp callers check what the
// database decides (routing, the cap, the withheld caller) on both dialects.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readWav, segmentedCorrelation, writeWav } from '../helpers/audio.ts';
import { ManualClock } from '../../src/clock.ts';
import { REGISTRATION_LEASE_MS, TrunkRegistrations } from '../../src/telephony/registrations.ts';
import { registrationStore } from '../../src/modules/sip/sip-registrations.store.ts';
import { SipEndpoint } from '../../src/sip/endpoint.ts';
import { startBaresip } from '../helpers/baresip.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { toolSchema } from '../helpers/fixtures.ts';
import { startKamailio, type Kamailio } from '../helpers/kamailio.ts';
import { startSipp } from '../helpers/sipp.ts';
import { startReceiver, type Receiver } from '../calls/support/receiver.ts';
import { startWorld, type World } from '../calls/support/world.ts';
import { startElevenLabsFake, type ElevenLabsFake } from '../voice/fakes/elevenlabs.ts';
import { startFakeDeepgram, type FakeDeepgram } from '../voice/fakes/deepgram.ts';
import { until } from '../helpers/until.ts';

const XI_KEY = 'xi-test-key-0123456789';
const DG_KEY = 'dg-test-key-0123456789';
const VOICE = { provider: 'elevenlabs', voiceId: 'Rachel', modelId: 'eleven_flash_v2_5', stability: 0.4, similarityBoost: 0.8, style: 0.1, useSpeakerBoost: true, speed: 1.1 };
const GREETING = 'Hello, you have reached Parley, how can I help you today?';
/** The number Kamailio delivers to the registration of its trunk account. */
const NUMBER = '+12125550100';
const PHONE = '+12125550101';
const json = (v: unknown): any => (typeof v === 'string' ? JSON.parse(v) : v);


for (const dialect of DIALECTS) {
  describe(`inbound SIP calls to numbers, and trunk registration (${dialect})`, () => {
    let dir: string;
    let w: World;
    let k: Kamailio;
    let tts: ElevenLabsFake;
    let stt: FakeDeepgram;
    let receiver: Receiver;
    let credentialUrl: string;
    let credentialId: string;
    let sipPort: number;
    let tools = 0;

    const credential = async () => (await w.api('GET', credentialUrl)).body.data;
    const liveCalls = async () => w.t.ctx.db.kysely.selectFrom('calls').selectAll().where('sip_credential_id', '=', credentialId).where('status', '=', 'active').execute();
    const lastCall = () => w.t.ctx.db.kysely.selectFrom('calls').selectAll().where('sip_credential_id', '=', credentialId).orderBy('created_at', 'desc').limit(1).executeTakeFirstOrThrow();

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'parley-inbound-'));
      tts = await startElevenLabsFake({
        apiKey: XI_KEY, voiceId: 'Rachel', modelId: 'eleven_flash_v2_5', outputFormat: 'pcm_8000',
        voiceSettings: { stability: 0.4, similarity_boost: 0.8, style: 0.1, use_speaker_boost: true, speed: 1.1 },
      });
      stt = await startFakeDeepgram({ apiKey: DG_KEY, model: 'nova-3', language: 'en' });
      receiver = await startReceiver();
      k = await startKamailio({ template: 'proxy', did: NUMBER });
      w = await startWorld(dialect, {
        ELEVENLABS_API_KEY: XI_KEY, ELEVENLABS_BASE_URL: tts.url, DEEPGRAM_API_KEY: DG_KEY, DEEPGRAM_BASE_URL: stt.url,
        PARLEY_DIALER: 'sip', PARLEY_SIP_PORT: '0', PARLEY_SIP_HOST: '127.0.0.1', PARLEY_RTP_PORTS: dialect === 'sqlite' ? '22000-22049' : '22050-22099',
      });
      sipPort = w.t.app.telephony!.endpoint.port;
      const strategy = await w.api('POST', `${w.tenant.orgPath}/llm-generation-strategies`, {
        name: 'Phone voice', type: 'text_to_speech',
        parameters: { model: 'test-model', outputSampleRate: 8000, voice: VOICE, vad: { stopDuration: 0.6 }, transcriber: { provider: 'deepgram', model: 'nova-3', language: 'en' } },
      });
      assert.equal(strategy.status, 201, JSON.stringify(strategy.body));
      // The LLM looks the order up when keys are pressed, and says one sentence otherwise.
      w.llm.respond = (body) => {
        const last = body.messages.at(-1);
        if (last.role === 'tool') return { text: 'It arrives tomorrow.' };
        if (/the caller pressed/.test(String(last.content))) return { toolCalls: [{ id: `call_${++tools}`, name: 'lookup_order', arguments: '{"orderNumber":"A-17"}' }] };
        return { text: 'Thank you.' };
      };
      // The trunk account, first with a wrong password: the registration fails with Kamailio's 403.
      const created = await w.api('POST', `${w.tenant.orgPath}/sip/credentials`, {
        name: 'Trunk', hostname: '127.0.0.1', port: k.udpPort, username: k.username, password: 'not-the-password', maxAgentTasks: 1, register: true,
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      credentialId = created.body.data.id;
      credentialUrl = `${w.tenant.orgPath}/sip/credentials/${credentialId}`;
      const number = await w.api('POST', `${w.tenant.orgPath}/sip/numbers`, { number: '+1 212 555 0100', sipCredentialId: credentialId });
      assert.equal(number.status, 201, JSON.stringify(number.body));
      await w.createAssistant({
        name: 'Front desk', llmAudioContentGenerationStrategyId: strategy.body.data.id, telephoneNumberId: number.body.data.id, systemPromptGreeting: GREETING,
        extensions: [{ type: 'tool_webhook', parameters: { name: 'lookup_order', serverUrl: `${receiver.url}/tools`, schema: toolSchema('lookup_order') } }],
      });
    });
    after(async () => {
      await w?.close();
      await k?.stop();
      await Promise.all([tts?.close(), stt?.close(), receiver?.close()]);
      await rm(dir, { recursive: true, force: true });
    });

    it('shows the registration on the credentials: failed with 403 on a wrong password, registered with 200 once it is right', { timeout: 60_000 }, async () => {
      const failed = await until('a failed registration', credential, (c) => c.registration?.state === 'failed');
      assert.deepEqual(failed.registration, { state: 'failed', lastStatusCode: 403, expiresAt: null });
      assert.equal(failed.register, true);
      // Changing the password restarts the registration at once.
      const patched = await w.api('PATCH', credentialUrl, { password: k.password });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      const registered = await until('a registration', credential, (c) => c.registration?.state === 'registered');
      assert.equal(registered.registration.lastStatusCode, 200);
      const expiresIn = Date.parse(registered.registration.expiresAt) - Date.now();
      assert.ok(expiresIn > 60_000 && expiresIn <= 300_000, `expiresAt ${registered.registration.expiresAt}`);
      assert.equal(await k.bindings(k.username), 1);
      const listed = (await w.api('GET', `${w.tenant.orgPath}/sip/credentials`)).body.data;
      assert.deepEqual(listed.find((c: { id: string }) => c.id === credentialId)?.registration, registered.registration);
    });

    if (dialect === 'sqlite') {
      it('a phone calls the number through the trunk: the assistant greets at once, DTMF reaches the LLM, a tool sees both numbers', { timeout: 90_000 }, async (t) => {
        await until('registered', credential, (c) => c.registration?.state === 'registered');
        const source = join(dir, 'silence.wav');
        await writeWav(source, new Int16Array(8000 * 12));
        const phone = await startBaresip({ user: PHONE, registrar: { host: '127.0.0.1', port: k.udpPort }, source, rtpPorts: '22100-22149' });
        try {
          const ttsFrom = tts.sent.length;
          const llmFrom = w.llm.requests.length;
          const toolsFrom = receiver.requests.length;
          const dial = await phone.command('dial', `sip:${NUMBER}@127.0.0.1:${k.udpPort}`);
          assert.ok(dial.ok, dial.data);
          await phone.waitEvent('CALL_ESTABLISHED');
          const call = await until('the call record', liveCalls, (rows) => rows.length === 1).then((rows) => rows[0]!);
          assert.deepEqual(json(call.transport), { type: 'sip', calledNumber: NUMBER, callingNumber: PHONE });
          assert.deepEqual(json(call.audio), { encoding: 'mulaw', sampleRate: 8000 });
          // Keys once the greeting has been spoken (a key while it plays would cut it short).
          await until('the greeting spoken', () => w.t.ctx.db.kysely.selectFrom('call_entries').select('text').where('call_id', '=', call.id).where('kind', '=', 'assistant').execute(), (rows) => rows.length > 0);
          const sent = await phone.command('sndcode', '4');
          assert.ok(sent.ok, sent.data);
          await until('the tool call', async () => receiver.requests.length, (n) => n > toolsFrom);
          assert.deepEqual(receiver.requests[toolsFrom]?.body.transport, { type: 'sip', calledNumber: NUMBER, callingNumber: PHONE });
          const heardByLlm = w.llm.requests.slice(llmFrom).flatMap((body) => body.messages).filter((m: { role: string }) => m.role === 'user').map((m: { content: string }) => m.content);
          assert.ok(heardByLlm.includes('the caller pressed 4'), JSON.stringify(heardByLlm));
          // The phone hangs up when its file ends; it heard the greeting as the TTS made it.
          await phone.waitEvent('CALL_CLOSED', undefined, 30_000);
          const ended = await until('the call ended', lastCall, (row) => row.status === 'ended');
          assert.equal(ended.end_reason, 'client_ended');
          const greeting = tts.sent[ttsFrom];
          assert.equal(greeting?.text.trim(), GREETING);
          const heard = (await readWav((await phone.recordings()).heard)).pcm;
          const correlation = segmentedCorrelation(greeting.pcm, heard);
          assert.ok(correlation >= 0.9, `greeting at the phone: correlation ${correlation.toFixed(3)}`);
          t.diagnostic(`greeting at the phone: correlation ${correlation.toFixed(3)}`);
        } finally {
          await phone.stop();
        }
      });
    }

    it('a withheld caller reaches the tool as anonymous; a second call over the cap of 1 gets 486', { timeout: 60_000 }, async () => {
      await until('registered', credential, (c) => c.registration?.state === 'registered');
      const toolsFrom = receiver.requests.length;
      const anonymous = await startSipp({
        scenario: 'uac-talk.xml', remote: `127.0.0.1:${k.udpPort}`, service: NUMBER, timeoutSeconds: 40,
        vars: { FROM: '"Anonymous" <sip:anonymous@anonymous.invalid>', PRIVACY: 'Privacy: id', DIGIT: '7', TALK_MS: '6000' },
      });
      try {
        await until('the call record', liveCalls, (rows) => rows.length === 1);
        // The credentials carry one call at most: the next is busy, and leaves no record.
        const busy = await startSipp({ scenario: 'uac-refused.xml', remote: `127.0.0.1:${sipPort}`, service: NUMBER, vars: { STATUS: '486' } });
        try {
          const { code, log } = await busy.done;
          assert.equal(code, 0, log);
        } finally {
          await busy.stop();
        }
        assert.equal((await liveCalls()).length, 1);
        await until('the tool call', async () => receiver.requests.length, (n) => n > toolsFrom);
        assert.deepEqual(receiver.requests[toolsFrom]?.body.transport, { type: 'sip', calledNumber: NUMBER, callingNumber: 'anonymous' });
        const { code, log } = await anonymous.done;
        assert.equal(code, 0, log);
      } finally {
        await anonymous.stop();
      }
      const ended = await until('the call ended', lastCall, (row) => row.status === 'ended');
      assert.deepEqual(json(ended.transport), { type: 'sip', calledNumber: NUMBER, callingNumber: 'anonymous' });
    });

    it('a caller sent as bare digits is read as the called number is (international E.164); the record keeps what the trunk sent, the tool sees interface.md\'s transport', { timeout: 60_000 }, async () => {
      await until('registered', credential, (c) => c.registration?.state === 'registered');
      const toolsFrom = receiver.requests.length;
      const caller = await startSipp({
        scenario: 'uac-talk.xml', remote: `127.0.0.1:${k.udpPort}`, service: NUMBER, timeoutSeconds: 40,
        vars: { FROM: '<sip:49176918682@127.0.0.1>', PRIVACY: 'Privacy: none', DIGIT: '5', TALK_MS: '6000' },
      });
      try {
        await until('the tool call', async () => receiver.requests.length, (n) => n > toolsFrom);
        assert.deepEqual(receiver.requests[toolsFrom]?.body.transport, { type: 'sip', calledNumber: NUMBER, callingNumber: '+49176918682' });
        const { code, log } = await caller.done;
        assert.equal(code, 0, log);
      } finally {
        await caller.stop();
      }
      const ended = await until('the call ended', lastCall, (row) => row.status === 'ended');
      assert.deepEqual(json(ended.transport), { type: 'sip', calledNumber: NUMBER, callingNumber: '+49176918682', callingNumberRaw: '49176918682' });
      const record = (await w.api('GET', `${w.tenant.orgPath}/calls/${ended.id}`)).body.data;
      assert.equal(record.transport.callingNumberRaw, '49176918682');
    });

    it('404 for a number nobody has, and for a number whose trunk is another host', { timeout: 30_000 }, async () => {
      // Credentials on 127.0.0.2 with a number: an INVITE for it from 127.0.0.1 is not from its trunk.
      const elsewhere = await w.api('POST', `${w.tenant.orgPath}/sip/credentials`, { name: 'Elsewhere', hostname: '127.0.0.2', username: 'x', password: 'y' });
      const other = await w.api('POST', `${w.tenant.orgPath}/sip/numbers`, { number: '+12125550177', sipCredentialId: elsewhere.body.data.id });
      assert.equal(other.status, 201, JSON.stringify(other.body));
      const before = await w.t.ctx.db.kysely.selectFrom('calls').select('id').execute();
      for (const service of ['+12125550199', '+12125550177', '12125550177']) {
        const s = await startSipp({ scenario: 'uac-refused.xml', remote: `127.0.0.1:${sipPort}`, service, vars: { STATUS: '404' } });
        try {
          const { code, log } = await s.done;
          assert.equal(code, 0, `${service}: ${log}`);
        } finally {
          await s.stop();
        }
      }
      assert.equal((await w.t.ctx.db.kysely.selectFrom('calls').select('id').execute()).length, before.length, 'no call records');
    });

    it('one process registers per credential: another leaves it alone while the lease runs, and takes over when it has run out', { timeout: 60_000 }, async () => {
      await until('registered', credential, (c) => c.registration?.state === 'registered');
      const owner = async () => (await w.t.ctx.db.kysely.selectFrom('sip_registrations').select('owner').where('sip_credential_id', '=', credentialId).executeTakeFirst())?.owner;
      const endpoint = await SipEndpoint.start({ host: '127.0.0.1', port: 0 });
      // A second process on the same database, whose clock can be moved past the lease.
      const clock = new ManualClock(new Date());
      const otherCtx = { db: w.t.ctx.db, clock, log: w.t.ctx.log, secrets: w.t.ctx.secrets, processId: 'other-process' };
      const other = new TrunkRegistrations({ endpoint }, registrationStore(otherCtx), otherCtx);
      try {
        await other.sync();
        assert.equal(await owner(), w.t.ctx.processId);
        assert.equal(await k.bindings(k.username), 1, 'only the lease holder registers');
        clock.advance(REGISTRATION_LEASE_MS + 1000);
        await other.sync();
        assert.equal(await owner(), 'other-process');
        await until('the other process registered', credential, (c) => c.registration?.state === 'registered');
        // A write through the API makes the first process look at once: it lost the lease, so it un-registers.
        assert.equal((await w.api('PATCH', credentialUrl, { name: 'Trunk (main)' })).status, 200);
        await until('one binding left', () => k.bindings(k.username), (n) => n === 1);
      } finally {
        await other.close();
        await endpoint.close();
      }
      // The lease is free again: the first process takes it back at its next look.
      assert.equal((await w.api('PATCH', credentialUrl, { name: 'Trunk' })).status, 200);
      await until('registered by this process again', owner, (o) => o === w.t.ctx.processId);
    });

    it('stops the registration when the credentials no longer ask for one: null status, no binding left', { timeout: 30_000 }, async () => {
      await until('registered', credential, (c) => c.registration?.state === 'registered');
      const patched = await w.api('PATCH', credentialUrl, { register: false });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      assert.equal((await credential()).registration, null);
      await until('no binding', () => k.bindings(k.username), (n) => n === 0);
      await until('no registration row', () => w.t.ctx.db.kysely.selectFrom('sip_registrations').selectAll().execute(), (rows) => rows.length === 0);
    });
  });
}
