import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { DIALECTS } from '../helpers/dialects.ts';
import { startTestS3, type TestS3 } from '../helpers/s3.ts';
import { until } from '../helpers/until.ts';
import { startElevenLabsFake, type ElevenLabsFake } from '../voice/fakes/elevenlabs.ts';
import { startFakeDeepgram, type FakeDeepgram } from '../voice/fakes/deepgram.ts';
import { concatPcm } from '../voice/fakes/audio.ts';
import { silence, speech } from '../voice/support/speech.ts';
import { createDecoder, createEncoder } from '../../src/voice/audio/format.ts';
import { connect, talk } from '../calls/support/client.ts';
import { startReceiver, type Receiver } from '../calls/support/receiver.ts';
import { connectTwilioStream } from '../calls/support/twilio-client.ts';
import { callRecord, startWorld, type World } from '../calls/support/world.ts';
import { alignedAt, alignedInPieces, speechBounds, splitWav } from './support.ts';

const XI_KEY = 'xi-test-key-0123456789';
const DG_KEY = 'dg-test-key-0123456789';
const HOOK_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const GREETING = 'Hello, this is the front desk.';
const QUESTION = 'When do you open tomorrow?';
const ANSWER = 'We open at nine in the morning.';
const MULAW = { encoding: 'mulaw', sampleRate: 8000 } as const;

interface Place {
  name: 'disk' | 's3';
  w: World;
  dir: string;
  assistantId: string;
  /** The app's clock: real time, moved ahead by the retention test. */
  clock: { offsetMs: number; now(): Date };
}

for (const dialect of DIALECTS) {
  describe(`recorded calls over the WebSocket and Twilio Media Streams, kept on disk and in S3 (${dialect})`, () => {
    let tts: ElevenLabsFake;
    let stt: FakeDeepgram;
    let s3: TestS3;
    let hooks: Receiver;
    const places: Place[] = [];
    let question16k: Int16Array;

    before(async () => {
      tts = await startElevenLabsFake({ apiKey: XI_KEY, voiceId: 'Rachel', modelId: 'eleven_flash_v2_5', outputFormat: 'pcm_16000' });
      stt = await startFakeDeepgram({ apiKey: DG_KEY, model: 'nova-3', language: 'en' });
      s3 = await startTestS3();
      hooks = await startReceiver();
      question16k = concatPcm([silence(0.5), await speech(QUESTION), silence(1.2)]);
      for (const name of ['disk', 's3'] as const) {
        const dir = mkdtempSync(join(tmpdir(), 'parley-recordings-'));
        const clock = { offsetMs: 0, now: () => new Date(Date.now() + clock.offsetMs) };
        const w = await startWorld(dialect, {
          ELEVENLABS_API_KEY: XI_KEY, ELEVENLABS_BASE_URL: tts.url, DEEPGRAM_API_KEY: DG_KEY, DEEPGRAM_BASE_URL: stt.url,
          PARLEY_RECORDINGS_DIR: dir, ...(name === 's3' ? s3.env : {}),
        }, { clock });
        const strategy = await w.api('POST', `${w.tenant.orgPath}/llm-generation-strategies`, {
          name: 'Voice', type: 'text_to_speech',
          parameters: { model: 'test-model', outputSampleRate: 16000, vad: { stopDuration: 0.6 }, transcriber: { provider: 'deepgram', model: 'nova-3', language: 'en' },
            voice: { provider: 'elevenlabs', voiceId: 'Rachel', modelId: 'eleven_flash_v2_5' } },
        });
        assert.equal(strategy.status, 201, JSON.stringify(strategy.body));
        const assistantId = await w.createAssistant({
          name: 'Front desk', systemPromptGreeting: GREETING, llmAudioContentGenerationStrategyId: strategy.body.data.id, recording: { enabled: true },
          callEventHooks: [{ type: 'recording_ready', parameters: { url: `${hooks.url}/${name}`, secret: HOOK_SECRET } }],
        });
        places.push({ name, w, dir, assistantId, clock });
      }
    });
    after(async () => {
      for (const p of places) {
        await p.w.close();
        rmSync(p.dir, { recursive: true, force: true });
      }
      await tts.close();
      await stt.close();
      await s3.close();
      await hooks.close();
    });

    /** Stores what is due and answers the call once its recording is ready. */
    async function ready(place: Place, callId: string): Promise<any> {
      return until('the recording to be ready', async () => {
        await place.w.t.app.runner.tick();
        await place.w.t.app.runner.idle();
        return callRecord(place.w, callId);
      }, (call) => call.recording?.status === 'ready', 20_000);
    }

    async function download(place: Place, callId: string, range?: string): Promise<{ status: number; headers: Headers; body: Buffer }> {
      const res = await fetch(`${place.w.address}${place.w.tenant.orgPath}/calls/${callId}/recording`, {
        headers: { authorization: 'Bearer test-admin-token-with-enough-length', ...(range ? { range } : {}) },
      });
      return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
    }

    /** The sealed object as kept: a file under the folder, or the bucket's object. */
    async function kept(place: Place, organizationId: string, callId: string): Promise<Buffer> {
      if (place.name === 's3') return (await s3.object(`${organizationId}/${callId}.rec`))!;
      const path = join(place.dir, organizationId, `${callId}.rec`);
      assert.equal(statSync(path).mode & 0o777, 0o600, 'the file is readable by its owner only');
      return readFileSync(path);
    }

    /** The whole WAV and parts of it by Range; the parts are the whole's bytes. */
    async function checkDownloads(place: Place, callId: string, call: any): Promise<Buffer> {
      const whole = await download(place, callId);
      assert.equal(whole.status, 200);
      assert.equal(whole.headers.get('content-type'), 'audio/wav');
      assert.equal(whole.headers.get('accept-ranges'), 'bytes');
      assert.equal(whole.body.length, 44 + call.recording.bytes);
      for (const [range, from, to] of [['bytes=0-99', 0, 100], ['bytes=70000-140123', 70000, 140124], ['bytes=-5000', whole.body.length - 5000, whole.body.length]] as const) {
        const part = await download(place, callId, range);
        assert.equal(part.status, 206, range);
        assert.equal(part.headers.get('content-range'), `bytes ${from}-${to - 1}/${whole.body.length}`);
        assert.ok(part.body.equals(whole.body.subarray(from, to)), `${range} is that part of the whole`);
      }
      const beyond = await download(place, callId, `bytes=${whole.body.length}-`);
      assert.equal(beyond.status, 416);
      assert.equal(beyond.headers.get('content-range'), `bytes */${whole.body.length}`);
      const sealed = await kept(place, place.w.tenant.organizationId, callId);
      assert.notEqual(sealed.toString('latin1', 0, 4), 'RIFF', 'what is kept is no WAV');
      assert.equal(sealed.toString('latin1', 0, 6), 'PRLREC');
      // No stretch of the PCM appears in the sealed bytes.
      assert.equal(sealed.indexOf(whole.body.subarray(44 + 20_000, 44 + 20_064)), -1, 'the audio is not in the clear');
      return whole.body;
    }

    /** Each channel holds the audio of each transcript entry where the entry says, within 40 ms. */
    function checkAlignment(call: any, wav: Buffer, caller: Int16Array, callerRate: number, sentences: Int16Array[]): void {
      const { left, right, sampleRate } = splitWav(wav);
      assert.equal(sampleRate, call.recording.sampleRate);
      const toRate = (pcm: Int16Array, from: number) => (from === sampleRate ? pcm : createDecoder({ encoding: 'pcm_s16le', sampleRate: from }, sampleRate).decode(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength)));
      const [greeting, user, answer] = call.transcript;
      assert.deepEqual([greeting.role, user.role, answer.role], ['assistant', 'user', 'assistant']);
      for (const entry of call.transcript) assert.ok(Number.isInteger(entry.startMs) && entry.endMs >= entry.startMs, JSON.stringify(entry));
      // In pieces, as for all speech (docs/testing.md): a send the busy event loop made late shifts
      // what follows it on the recording, as it shifted it on the wire.
      const pieces = { follow: true, leaveOut: 0.25, lateMs: 400 };
      const greet = alignedInPieces(toRate(sentences[0]!, 16000), right, sampleRate, greeting.startMs, pieces);
      assert.ok(greet.ncc >= 0.9, `the right channel holds the greeting at ${greeting.startMs} ms: NCC ${greet.ncc} (${greet.pieces})`);
      const ans = alignedInPieces(toRate(sentences[1]!, 16000), right, sampleRate, answer.startMs, pieces);
      assert.ok(ans.ncc >= 0.9, `the right channel holds the answer at ${answer.startMs} ms: NCC ${ans.ncc} (${ans.pieces})`);
      const bounds = speechBounds(caller, callerRate);
      const said = toRate(caller.subarray(bounds.start, bounds.end), callerRate);
      const asked = alignedAt(said, left, sampleRate, user.startMs);
      assert.ok(asked.ncc >= 0.9, `the left channel holds the question at ${user.startMs} ms: NCC ${asked.ncc} (shift ${asked.shiftMs} ms)`);
      // And the sides do not bleed: the assistant's channel is quiet while the caller asks.
      const quiet = alignedAt(said, right, sampleRate, user.startMs);
      assert.ok(quiet.ncc < 0.3, `the right channel does not hold the question: NCC ${quiet.ncc}`);
    }

    async function checkReadyHook(place: Place, callId: string, call: any): Promise<void> {
      const delivered = await until('recording_ready', async () => {
        await place.w.t.app.runner.tick();
        return hooks.requests.find((r) => r.url.endsWith(`/${place.name}`) && r.body?.data?.callId === callId);
      }, Boolean, 20_000).catch(async (err: unknown) => {
        const log = await place.w.api('GET', `${place.w.tenant.orgPath}/webhook-deliveries`);
        throw new Error(`${String(err)}; received ${JSON.stringify(hooks.requests.map((r) => [r.url, r.body?.data?.callId]))}; deliveries ${JSON.stringify(log.body)}`);
      });
      const event = new Webhook(HOOK_SECRET).verify(delivered!.rawBody, delivered!.headers as Record<string, string>) as any;
      assert.equal(event.type, 'recording_ready');
      assert.deepEqual(event.data.recording, { ...call.recording, status: 'ready' });
    }

    for (const placeName of ['disk', 's3'] as const) {
      it(`a WebSocket voice call is recorded in stereo at its rate, stored (${placeName}), served whole and by Range, aligned with its transcript`, { timeout: 90_000 }, async () => {
        const place = places.find((p) => p.name === placeName)!;
        const { w } = place;
        stt.setTranscript(QUESTION);
        w.llm.respond = () => ({ text: ANSWER });
        const ttsFrom = tts.sent.length;
        const started = await w.api('POST', `${w.tenant.orgPath}/assistants/${place.assistantId}/calls`, { audio: { encoding: 'pcm_s16le', sampleRate: 16000 } });
        const client = await connect(started.body.data.websocketUrl);
        const callId = started.body.data.id as string;
        await client.next('call_started');
        await client.next((f) => f.type === 'assistant_message' && f.text === GREETING);
        await until('the greeting to play out', async () => client.audio.length, (n) => n * 640 >= (tts.sent[ttsFrom]?.pcm.length ?? Infinity) * 2, 15_000);
        await talk(client, question16k);
        await client.next((f) => f.type === 'assistant_message' && f.text === ANSWER, 15_000);
        await until('the answer to play out', async () => tts.sent.length > ttsFrom + 1 && client.audio.reduce((n, a) => n + a.bytes.length, 0) / 2 >= tts.sent.slice(ttsFrom).reduce((n, s) => n + s.pcm.length, 0), Boolean, 15_000);
        client.send({ type: 'end' });
        await client.closed;
        const during = await callRecord(w, callId);
        assert.ok(['recording', 'uploading', 'ready'].includes(during.recording.status), JSON.stringify(during.recording));
        const call = await ready(place, callId);
        assert.deepEqual({ ...call.recording, durationMs: 0, bytes: 0 }, { status: 'ready', durationMs: 0, bytes: 0, channels: 2, sampleRate: 16000 });
        assert.ok(Math.abs((call.recording.bytes / 4 / 16000) * 1000 - call.recording.durationMs) <= 1, JSON.stringify(call.recording));
        const wav = await checkDownloads(place, callId, call);
        checkAlignment(call, wav, question16k, 16000, [tts.sent[ttsFrom]!.pcm, tts.sent[ttsFrom + 1]!.pcm]);
        await checkReadyHook(place, callId, call);
        if (placeName === 's3') assert.deepEqual(s3.refused, [], 'every request to the bucket was signed right');
      });

      it(`a Twilio Media Streams call is recorded at 8 kHz, stored (${placeName}), and lines up with its transcript`, { timeout: 90_000 }, async () => {
        const place = places.find((p) => p.name === placeName)!;
        const { w } = place;
        stt.setTranscript(QUESTION);
        w.llm.respond = () => ({ text: ANSWER });
        const ttsFrom = tts.sent.length;
        const started = await w.api('POST', `${w.tenant.orgPath}/assistants/${place.assistantId}/calls`, { protocol: 'twilio' });
        assert.equal(started.status, 201, JSON.stringify(started.body));
        const callId = started.body.data.id as string;
        const twilio = await connectTwilioStream(started.body.data.websocketUrl, { accountSid: 'AC0', callSid: 'CA0', streamSid: 'MZ0' });
        twilio.start();
        await until('the greeting to play', async () => twilio.playedBytes(), (n) => tts.sent.length > ttsFrom && n >= (tts.sent[ttsFrom]!.pcm.length / 2), 15_000);
        const mulaw = createEncoder(16000, MULAW).encode(question16k);
        await twilio.talk(mulaw);
        await until('the answer to play', async () => twilio.playedBytes(), (n) => tts.sent.length > ttsFrom + 1 && n >= tts.sent.slice(ttsFrom, ttsFrom + 2).reduce((s, x) => s + x.pcm.length / 2, 0), 15_000);
        twilio.stop();
        await twilio.closed;
        const call = await ready(place, callId);
        assert.equal(call.recording.sampleRate, 8000);
        const wav = await checkDownloads(place, callId, call);
        const heard = createDecoder(MULAW, 8000).decode(mulaw);
        checkAlignment(call, wav, heard, 8000, [tts.sent[ttsFrom]!.pcm, tts.sent[ttsFrom + 1]!.pcm]);
        await checkReadyHook(place, callId, call);
      });
    }

    it('DELETE removes a recording everywhere and keeps the status deleted; the retention sweep deletes old ones (injected clock)', { timeout: 30_000 }, async () => {
      for (const place of places) {
        const { w } = place;
        const calls = (await w.api('GET', `${w.tenant.orgPath}/calls?size=100`)).body.data.filter((c: any) => c.recording?.status === 'ready');
        assert.ok(calls.length >= 2, `${place.name}: two recorded calls`);
        const [first, second] = calls;
        const del = await w.api('DELETE', `${w.tenant.orgPath}/calls/${first.id}/recording`);
        assert.equal(del.status, 200, JSON.stringify(del.body));
        assert.equal((await callRecord(w, first.id)).recording.status, 'deleted');
        assert.equal((await download(place, first.id)).status, 404);
        if (place.name === 's3') assert.equal(await s3.object(`${w.tenant.organizationId}/${first.id}.rec`), null);
        else assert.ok(!readdirSync(join(place.dir, w.tenant.organizationId)).includes(`${first.id}.rec`));
        // PARLEY_RECORDING_RETENTION_DAYS is 90: nothing goes before, the rest goes after, on the app's clock.
        assert.equal((await w.t.app.runner.sweepNow()).recordings_retention, 0, 'nothing is old yet');
        assert.equal((await callRecord(w, second.id)).recording.status, 'ready');
        place.clock.offsetMs = 91 * 86_400_000;
        assert.ok((await w.t.app.runner.sweepNow()).recordings_retention! >= 1);
        place.clock.offsetMs = 0;
        assert.equal((await callRecord(w, second.id)).recording.status, 'deleted');
        assert.equal((await download(place, second.id)).status, 404);
        if (place.name === 's3') assert.equal(await s3.object(`${w.tenant.organizationId}/${second.id}.rec`), null);
      }
    });
  });
}
