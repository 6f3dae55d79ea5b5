import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DIALECTS } from '../helpers/dialects.ts';
import { toolSchema } from '../helpers/fixtures.ts';
import { startElevenLabsFake, type ElevenLabsFake } from '../voice/fakes/elevenlabs.ts';
import { startFakeDeepgram, type FakeDeepgram } from '../voice/fakes/deepgram.ts';
import { concatPcm } from '../voice/fakes/audio.ts';
import { durationRatio, similarity } from '../voice/support/compare.ts';
import { silence, speech } from '../voice/support/speech.ts';
import { createDecoder, createEncoder } from '../../src/voice/audio/format.ts';
import { startReceiver, type Receiver } from './support/receiver.ts';
import { connectTwilioStream, type TwilioStreamClient } from './support/twilio-client.ts';
import { asHeardAt, SPEAKING_PROVIDERS, speakingStrategy, startTtsFakeOf } from './support/voices.ts';
import { callRecord, startWorld, type World } from './support/world.ts';
import { until } from '../helpers/until.ts';

const XI_KEY = 'xi-test-key-0123456789';
const DG_KEY = 'dg-test-key-0123456789';
const AUTH_TOKEN = 'twilio-auth-token-0123456789abcdef';
const PROVIDER_KEY = 'tts-provider-key-0123456789abcdef';
const ACCOUNT_SID = 'AC0123456789abcdef0123456789abcdef';
/** What PARLEY_PUBLIC_URL says Twilio calls; the test reaches the same app over loopback. */
const PUBLIC_URL = 'https://parley.example.test';
const NUMBER = '+14155550199';
const CALLER = '+14155550100';
const GREETING = 'Hello, this is the front desk.';
const QUESTION = 'Where is my order?';
const MULAW = { encoding: 'mulaw', sampleRate: 8000 } as const;

/** Twilio's published scheme, written here independently of the code under test. */
function sign(token: string, url: string, form: Record<string, string>): string {
  const data = url + Object.keys(form).sort().map((name) => name + form[name]).join('');
  return createHmac('sha1', token).update(data).digest('base64');
}

const mulawSpeech = async (text: string, pad = 1.2) => {
  const pcm = concatPcm([silence(0.3), await speech(text), silence(pad)]);
  return createEncoder(16000, MULAW).encode(pcm);
};
const decodeMulaw = (bytes: Buffer) => createDecoder(MULAW, 8000).decode(bytes);

for (const dialect of DIALECTS) {
  describe(`Twilio voice webhook and Media Streams (${dialect})`, () => {
    let w: World;
    let tts: ElevenLabsFake;
    let stt: FakeDeepgram;
    let tools: Receiver;
    let webhookPath: string;
    let sequence = 0;

    before(async () => {
      tts = await startElevenLabsFake({
        apiKey: XI_KEY, voiceId: 'Rachel', modelId: 'eleven_flash_v2_5', outputFormat: 'pcm_16000',
        voiceSettings: { stability: 0.4, similarity_boost: 0.8, style: 0.1, use_speaker_boost: true, speed: 1 },
      });
      stt = await startFakeDeepgram({ apiKey: DG_KEY, model: 'nova-3', language: 'en' });
      tools = await startReceiver();
      w = await startWorld(dialect, {
        ELEVENLABS_API_KEY: XI_KEY, ELEVENLABS_BASE_URL: tts.url, DEEPGRAM_API_KEY: DG_KEY, DEEPGRAM_BASE_URL: stt.url, PARLEY_PUBLIC_URL: PUBLIC_URL,
      });
      const org = w.tenant.orgPath;
      webhookPath = `${org}/twilio/voice`;
      const created = async (path: string, body: unknown) => {
        const res = await w.api('POST', `${org}${path}`, body);
        assert.equal(res.status, 201, JSON.stringify(res.body));
        return res.body.data.id as string;
      };
      await created('/provider-credentials', { provider: 'twilio', apiKey: AUTH_TOKEN, accountSid: ACCOUNT_SID });
      const trunk = await created('/sip/credentials', { name: 'Twilio', hostname: '127.0.0.1', username: 'acme', password: 'never-sent' });
      const numberId = await created('/sip/numbers', { number: NUMBER, sipCredentialId: trunk });
      const strategy = await created('/llm-generation-strategies', {
        name: 'Phone', type: 'text_to_speech',
        parameters: {
          model: 'test-model', outputSampleRate: 16000, vad: { stopDuration: 0.6 }, transcriber: { provider: 'deepgram', model: 'nova-3', language: 'en' },
          voice: { provider: 'elevenlabs', voiceId: 'Rachel', modelId: 'eleven_flash_v2_5', stability: 0.4, similarityBoost: 0.8, style: 0.1, useSpeakerBoost: true, speed: 1 },
        },
      });
      await w.createAssistant({
        name: 'Front desk', systemPromptGreeting: GREETING, llmAudioContentGenerationStrategyId: strategy, telephoneNumberId: numberId,
        extensions: [{ type: 'tool_webhook', parameters: { name: 'lookup_order', serverUrl: tools.url, schema: toolSchema('lookup_order') } }],
      });
    });
    after(async () => {
      await w.close();
      await tts.close();
      await stt.close();
      await tools.close();
    });

    /** Posts the voice webhook as Twilio would; `signWith` changes what the signature covers. */
    async function webhook(form: Record<string, string>, signWith: { token?: string; url?: string; path?: string } = {}) {
      const path = signWith.path ?? webhookPath;
      const signature = sign(signWith.token ?? AUTH_TOKEN, signWith.url ?? `${PUBLIC_URL}${path}`, form);
      const res = await fetch(`${w.address}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature, 'i-twilio-idempotency-token': `t${++sequence}` },
        body: new URLSearchParams(form).toString(),
      });
      return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
    }

    const callForm = (over: Record<string, string> = {}) => ({
      CallSid: `CA${String(++sequence).padStart(32, '0')}`, AccountSid: ACCOUNT_SID, From: CALLER, To: NUMBER,
      CallStatus: 'ringing', Direction: 'inbound', ApiVersion: '2010-04-01', ...over,
    });

    /** The stream URL of a TwiML answer, as Twilio reads it, and the loopback URL the test connects to. */
    function streamUrl(twiml: string): { published: string; local: string; callId: string } {
      const match = /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<Response><Connect><Stream url="([^"]+)"\/><\/Connect><\/Response>\n$/.exec(twiml);
      assert.ok(match, `TwiML: ${twiml}`);
      const published = match[1]!.replace(/&amp;/g, '&');
      const path = published.slice('wss://parley.example.test'.length);
      assert.ok(published.startsWith('wss://parley.example.test/api/v1/calls/'), published);
      return { published, local: `${w.address.replace(/^http/, 'ws')}${path}`, callId: path.split('/')[4]! };
    }

    async function answer(form = callForm()): Promise<{ client: TwilioStreamClient; callId: string; form: Record<string, string> }> {
      const res = await webhook(form);
      assert.equal(res.status, 200, res.text);
      assert.match(res.type, /^text\/xml/);
      const { local, callId } = streamUrl(res.text);
      const client = await connectTwilioStream(local, { accountSid: ACCOUNT_SID, callSid: form.CallSid, streamSid: `MZ${callId.replace(/-/g, '')}` });
      client.start({ caller: form.From });
      return { client, callId, form };
    }

    /** Waits until the caller has received, beyond `from` bytes, the TTS output from sentence `sentence` on, at 8 kHz. */
    async function heardFrom(client: TwilioStreamClient, sentence: number, from = 0, deadlineMs = 20_000) {
      const until = performance.now() + deadlineMs;
      for (;;) {
        const made = Math.floor(tts.sent.slice(sentence).reduce((n, s) => n + s.pcm.length, 0) / 2);
        const got = client.audio().length - from;
        if (made > 0 && got >= made) return;
        if (performance.now() > until) throw new Error(`heard ${got} of ${made} samples`);
        await sleep(50);
      }
    }

    it('a signed call: TwiML connects the stream, the greeting arrives as mu-law 8 kHz, a question runs a tool, stop ends it with a record', { timeout: 60_000 }, async () => {
      const ttsFrom = tts.sent.length;
      stt.setTranscript(QUESTION);
      w.llm.respond = (body) => (body.messages.at(-1).role === 'tool'
        ? { text: 'Your order ships Monday.' }
        : { toolCalls: [{ id: 'c1', name: 'lookup_order', arguments: '{"orderNumber":"42"}' }] });
      tools.answer = () => ({ body: 'Order 42 ships Monday.' });
      const toolsFrom = tools.requests.length;
      const { client, callId } = await answer();

      // The greeting, as Twilio would play it: mu-law 8 kHz, the same speech the TTS made.
      await heardFrom(client, ttsFrom);
      assert.equal(tts.sent[ttsFrom]?.text.trim(), GREETING);
      const made = createEncoder(16000, { encoding: 'pcm_s16le', sampleRate: 8000 }).encode(tts.sent[ttsFrom].pcm);
      const reference = new Int16Array(made.buffer, made.byteOffset, made.length / 2);
      const got = decodeMulaw(client.audio());
      const match = similarity(reference, got.subarray(0, reference.length + 160), 64);
      assert.ok(match.ncc >= 0.9, `greeting NCC ${match.ncc}`);
      assert.ok(Math.abs(durationRatio(reference, got) - 1) <= 0.05, `greeting duration ratio ${durationRatio(reference, got)}`);
      assert.ok(client.received.filter((r) => r.message.event === 'media').every((r) => Buffer.from(r.message.media.payload, 'base64').length === 160), '20 ms media chunks');

      // The caller asks; the tool webhook hears the numbers of the phone call; the answer is heard.
      const greetingBytes = client.audio().length;
      const answerFrom = tts.sent.length;
      await client.talk(await mulawSpeech(QUESTION));
      const deadline = performance.now() + 20_000;
      while (tools.requests.length === toolsFrom && performance.now() < deadline) await sleep(50);
      const request = tools.requests[toolsFrom];
      assert.ok(request, 'the tool webhook was called');
      assert.deepEqual(request.body.transport, { type: 'sip', calledNumber: NUMBER, callingNumber: CALLER });
      assert.equal(request.body.callId, callId);
      while (!tts.sent.slice(answerFrom).some((s) => s.text.includes('ships Monday')) && performance.now() < deadline) await sleep(50);
      await heardFrom(client, answerFrom, greetingBytes);
      assert.ok(client.playedBytes() > 0);

      client.stop();
      assert.equal((await client.closed).code, 1000);
      assert.deepEqual(client.violations, []);
      let call = await callRecord(w, callId);
      while (call.status !== 'ended' && performance.now() < deadline) call = await callRecord(w, callId);
      assert.equal(call.endReason, 'client_ended');
      assert.deepEqual(call.transport, { type: 'sip', calledNumber: NUMBER, callingNumber: CALLER });
      assert.deepEqual(call.audio, MULAW);
      assert.deepEqual(call.transcript.map((e: any) => [e.role, e.text]).filter(([role]: string[]) => role !== 'tool'), [
        ['assistant', GREETING], ['user', QUESTION], ['assistant', 'Your order ships Monday.'],
      ]);
      assert.deepEqual(tts.violations.list, []);
      assert.deepEqual(stt.problems, []);
    });

    it('barge-in: the caller speaking over an answer makes Parley send clear', { timeout: 60_000 }, async () => {
      const long = 'Our opening hours are from nine in the morning until six in the evening. ' +
        'On Saturdays we open at ten and close at four in the afternoon. ' +
        'On Sundays and public holidays the shop stays closed all day long.';
      stt.setTranscript(QUESTION);
      w.llm.respond = (body) => ({ text: body.messages.at(-1).content === 'Wait a moment' ? 'Of course.' : long });
      const ttsFrom = tts.sent.length;
      const { client, callId } = await answer(callForm({ From: 'anonymous' }));
      await heardFrom(client, ttsFrom);
      const greetingBytes = client.audio().length;
      await client.talk(await mulawSpeech(QUESTION));
      // A second of the answer, then the caller speaks over it.
      while (client.audio().length - greetingBytes < 8000) await sleep(20);
      stt.setTranscript('Wait a moment');
      const talking = client.talk(await mulawSpeech('Wait a moment'));
      const clear = await client.next('clear', 15_000);
      assert.equal(clear.streamSid, `MZ${callId.replace(/-/g, '')}`);
      await talking;
      client.stop();
      await client.closed;
      assert.deepEqual(client.violations, []);
      const call = await callRecord(w, callId);
      assert.equal(call.transport.callingNumber, 'anonymous');
      const answered = call.transcript.find((e: any) => e.role === 'assistant' && e.text !== GREETING);
      assert.ok(answered && answered.text.length < long.length, `only the heard part is kept: ${JSON.stringify(answered)}`);
    });

    it('turn-taking: a backchannel over the answer pauses it (clear), then it plays on; the record counts a false interruption and no turn', { timeout: 60_000 }, async () => {
      const long = 'Our opening hours are from nine in the morning until six in the evening. ' +
        'On Saturdays we open at ten and close at four in the afternoon. ' +
        'On Sundays and public holidays the shop stays closed all day long.';
      const [ask, yeah] = [await speech('Tell me your hours'), await speech('yeah')];
      // The fake STT's script follows the bursts of sound it is sent (test/voice/fakes/deepgram.ts).
      stt.setScript([{ text: 'Tell me your hours.', seconds: (ask.length / 16000) * 0.6 }, { text: 'Yeah.', seconds: (yeah.length / 16000) * 0.6 }]);
      w.llm.respond = () => ({ text: long });
      const ttsFrom = tts.sent.length;
      const { client, callId } = await answer(callForm());
      await heardFrom(client, ttsFrom);
      const greetingBytes = client.audio().length;
      const llmBefore = w.llm.requests.length;
      await client.talk(await mulawSpeech('Tell me your hours'));
      while (client.audio().length - greetingBytes < 8000) await sleep(20);
      await client.talk(await mulawSpeech('yeah'));
      await client.next('clear', 15_000);
      const afterClear = client.audio().length;
      // The answer plays on after the pause: another second of it arrives.
      const deadline = performance.now() + 15_000;
      while (client.audio().length - afterClear < 8000) {
        assert.ok(performance.now() < deadline, 'the answer did not play on after the backchannel');
        await sleep(20);
      }
      assert.equal(w.llm.requests.length, llmBefore + 1, 'the backchannel made no turn');
      client.stop();
      await client.closed;
      assert.deepEqual(client.violations, []);
      const call = await callRecord(w, callId);
      assert.equal(call.turnTaking.falseInterruptions, 1);
      assert.deepEqual(call.transcript.filter((e: any) => e.role === 'user').map((e: any) => e.text), ['Tell me your hours.']);
      stt.setTranscript(QUESTION);
    });

    it('refuses a wrong signature, a Host-signed URL, another account and an organization without a credential; nothing is created', { timeout: 30_000 }, async () => {
      const before = (await w.api('GET', `${w.tenant.orgPath}/calls`)).body.totalElements;
      const refusals = [
        await webhook(callForm(), { token: 'not-the-auth-token' }),
        // Signed for the address the request reached (its Host), not the public URL Twilio is given.
        await webhook(callForm(), { url: `${w.address}${webhookPath}` }),
        await webhook(callForm({ AccountSid: 'AC99999999999999999999999999999999' })),
      ];
      // From as bare digits: read as the called number is, and kept as sent beside it on the record.
      const bare = await webhook(callForm({ From: '14155550100' }));
      const tampered = await fetch(`${w.address}${webhookPath}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': sign(AUTH_TOKEN, `${PUBLIC_URL}${webhookPath}`, callForm()) },
        body: new URLSearchParams({ ...callForm(), To: '+14155550000' }).toString(),
      });
      assert.equal(bare.status, 200, 'a good signature still passes');
      const other = await w.api('POST', '/api/v1/vendors', { name: 'Other vendor' });
      const otherOrg = await w.api('POST', `/api/v1/vendors/${other.body.data.id}/organizations`, { name: 'No Twilio' });
      const noCredential = await webhook(callForm(), { path: `/api/v1/vendors/${other.body.data.id}/organizations/${otherOrg.body.data.id}/twilio/voice` });
      for (const res of [...refusals, noCredential]) {
        assert.equal(res.status, 403, res.text);
        assert.equal(JSON.parse(res.text).error.code, 'FORBIDDEN');
      }
      assert.equal(tampered.status, 403);
      const after = (await w.api('GET', `${w.tenant.orgPath}/calls`)).body.totalElements;
      assert.equal(after, before + 1, 'only the signed request started a call');
      const { local, callId } = streamUrl(bare.text);
      assert.deepEqual((await callRecord(w, callId)).transport, { type: 'sip', calledNumber: NUMBER, callingNumber: CALLER, callingNumberRaw: '14155550100' });
      // That call's stream URL works once.
      const client = await connectTwilioStream(local, { accountSid: ACCOUNT_SID, callSid: 'CA1', streamSid: 'MZ1' });
      client.stop();
      await client.closed;
      await assert.rejects(connectTwilioStream(local, { accountSid: ACCOUNT_SID, callSid: 'CA1', streamSid: 'MZ1' }), { statusCode: 401 });
    });

    it('a captured signed request replayed 60 times creates one call; every replay hears busy and gets no stream URL', { timeout: 60_000 }, async () => {
      const before = (await w.api('GET', `${w.tenant.orgPath}/calls`)).body.totalElements;
      const form = callForm();
      const signature = sign(AUTH_TOKEN, `${PUBLIC_URL}${webhookPath}`, form);
      // The request exactly as captured: the same body, signature and headers each time.
      const replay = async () => {
        const res = await fetch(`${w.address}${webhookPath}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature, 'i-twilio-idempotency-token': 'captured' },
          body: new URLSearchParams(form).toString(),
        });
        return { status: res.status, text: await res.text() };
      };
      const first = await replay();
      assert.equal(first.status, 200, first.text);
      streamUrl(first.text);
      const replays = await Promise.all(Array.from({ length: 60 }, replay));
      for (const res of replays) {
        assert.equal(res.status, 200, res.text);
        assert.equal(res.text, '<?xml version="1.0" encoding="UTF-8"?>\n<Response><Reject reason="busy"/></Response>\n');
      }
      assert.equal((await w.api('GET', `${w.tenant.orgPath}/calls`)).body.totalElements, before + 1, 'one call for one CallSid');
      assert.match(w.logs(), /this CallSid was answered before/);
      // The next call, with its own CallSid, is answered as before.
      const fresh = await webhook(callForm());
      assert.equal(fresh.status, 200);
      streamUrl(fresh.text);
    });

    it('documents what it answers (no 401, no JSON 415) and answers body errors in its own terms', async () => {
      const openapi = (await w.api('GET', '/openapi.json')).body;
      const route = openapi.paths['/api/v1/vendors/{vendorId}/organizations/{organizationId}/twilio/voice'].post;
      assert.deepEqual(Object.keys(route.responses).sort(), ['200', '400', '403', '413', '415', '500', '503']);
      assert.deepEqual(route.security, []);
      assert.match(route.responses['415'].description, /x-www-form-urlencoded/);
      assert.match(route.responses['413'].description, /64 KiB/);
      const post = (type: string, body: string) => fetch(`${w.address}${webhookPath}`, { method: 'POST', headers: { 'content-type': type, 'x-twilio-signature': 'x' }, body });
      const notForm = await post('text/plain', 'To=+14155550199');
      assert.equal(notForm.status, 415);
      assert.match((await notForm.json() as { message: string }).message, /x-www-form-urlencoded/);
      const large = await post('application/x-www-form-urlencoded', `To=${'1'.repeat(70 * 1024)}`);
      assert.equal(large.status, 413);
      assert.match((await large.json() as { message: string }).message, /64 KiB/);
    });

    it('a number no assistant answers is told so in TwiML and hung up; nothing is created', async () => {
      const before = (await w.api('GET', `${w.tenant.orgPath}/calls`)).body.totalElements;
      const res = await webhook(callForm({ To: '+14155550111' }));
      assert.equal(res.status, 200);
      assert.equal(res.text, '<?xml version="1.0" encoding="UTF-8"?>\n<Response><Say>This number is not connected to an assistant. Goodbye.</Say><Hangup/></Response>\n');
      assert.equal((await w.api('GET', `${w.tenant.orgPath}/calls`)).body.totalElements, before);
    });

    it('protocol twilio on call start answers a media stream URL for any trunk; a stream in another format ends the call', { timeout: 30_000 }, async () => {
      const assistants = await w.api('GET', `${w.tenant.orgPath}/assistants`);
      const id = assistants.body.data[0].id;
      const wrong = await w.api('POST', `${w.tenant.orgPath}/assistants/${id}/calls`, { protocol: 'twilio', audio: { encoding: 'pcm_s16le', sampleRate: 16000 } });
      assert.equal(wrong.status, 400);
      const started = await w.api('POST', `${w.tenant.orgPath}/assistants/${id}/calls`, { protocol: 'twilio' });
      assert.equal(started.status, 201, JSON.stringify(started.body));
      const url: string = started.body.data.websocketUrl;
      assert.match(url, /^wss:\/\/parley\.example\.test\/api\/v1\/calls\/[0-9a-f-]{36}\/media-stream\/[A-Za-z0-9_-]+$/);
      const client = await connectTwilioStream(`${w.address.replace(/^http/, 'ws')}${url.slice('wss://parley.example.test'.length)}`, { accountSid: 'AC1', callSid: 'CA2', streamSid: 'MZ2' });
      client.start({}, { encoding: 'audio/x-l16', sampleRate: 16000, channels: 1 });
      await client.closed;
      const call = await callRecord(w, started.body.data.id);
      assert.equal(call.endReason, 'error');
      assert.equal(call.failure.source, 'transport:twilio');
      assert.match(call.failure.message, /audio\/x-l16 at 16000 Hz/);
      assert.deepEqual(call.transport, { type: 'websocket' });
    });

    // Every TTS provider of the registry speaks on Twilio Media Streams: a number of its own, an
    // assistant whose strategy speaks with it through the organization's credential to its fake.
    for (const [i, provider] of SPEAKING_PROVIDERS.entries()) {
      it(`${provider} speaks the greeting as mu-law 8 kHz over Media Streams`, { timeout: 60_000 }, async () => {
        const org = w.tenant.orgPath;
        const fake = await startTtsFakeOf(provider, PROVIDER_KEY, 8000);
        const made: string[] = [];
        const create = async (path: string, body: unknown) => {
          const res = await w.api('POST', `${org}${path}`, body);
          assert.equal(res.status, 201, JSON.stringify(res.body));
          made.unshift(res.headers.get('location')!.replace(/^.*\/api\/v1/, '/api/v1'));
          return res.body.data.id as string;
        };
        try {
          const number = `+1415555022${i}`;
          const trunk = await create('/sip/credentials', { name: `Twilio for ${provider}`, hostname: '127.0.0.1', username: provider, password: 'never-sent' });
          const numberId = await create('/sip/numbers', { number, sipCredentialId: trunk });
          const strategy = await speakingStrategy(w, org, provider, fake, PROVIDER_KEY, 8000);
          made.unshift(`${org}/llm-generation-strategies/${strategy}`);
          const credentials = (await w.api('GET', `${org}/provider-credentials?provider=${provider}`)).body.data;
          made.push(`${org}/provider-credentials/${credentials[0].id}`);
          await create('/assistants', { name: `Speaks ${provider}`, systemPromptGreeting: GREETING, llmAudioContentGenerationStrategyId: strategy, telephoneNumberId: numberId });
          const { client, callId } = await answer(callForm({ To: number }));
          await until('the greeting played', () => callRecord(w, callId), (record) => record.transcript.length > 0, 20_000);
          const greeting = fake.sent()[0];
          assert.equal(greeting?.text, GREETING);
          const reference = await asHeardAt(greeting.pcm, fake.sampleRate, 8000);
          await until('the greeting heard', async () => client.audio().length, (n) => n >= reference.length, 5_000);
          const got = decodeMulaw(client.audio());
          const match = similarity(reference, got.subarray(0, reference.length + 160), 64);
          assert.ok(match.ncc >= 0.9, `${provider} greeting NCC ${match.ncc}`);
          assert.ok(Math.abs(durationRatio(reference, got) - 1) <= 0.05, `${provider} duration ratio ${durationRatio(reference, got)}`);
          client.stop();
          await client.closed;
          assert.deepEqual(client.violations, []);
          assert.equal((await until('the call ended', () => callRecord(w, callId), (c) => c.status === 'ended')).providers.tts, provider);
          assert.deepEqual(fake.violations(), []);
        } finally {
          // The org's other tests reach their speech providers through the platform's keys: this one's credential goes.
          for (const path of made) await w.api('DELETE', path);
          await fake.close();
        }
      });
    }
  });
}
