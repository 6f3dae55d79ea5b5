// A recorded SIP call: a task's call goes out through Kamailio to baresip, which says its line
// after the greeting and hangs up when its file ends. The recording is the media thread's view:
// the left channel what came in over RTP, the right what went out on the wire, each transcript
// entry's audio where its startMs says, within 40 ms. Stored on disk, and in S3 behind the
// SigV4-checking proxy; served whole and by Range, and sealed where it is kept.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { speechWav, writeWav } from '../helpers/audio.ts';
import { startBaresip, type Baresip } from '../helpers/baresip.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { startKamailio, type Kamailio } from '../helpers/kamailio.ts';
import { startTestS3, type TestS3 } from '../helpers/s3.ts';
import { until } from '../helpers/until.ts';
import { callRecord, settledTask, startWorld, type World } from '../calls/support/world.ts';
import { startElevenLabsFake, type ElevenLabsFake } from '../voice/fakes/elevenlabs.ts';
import { startFakeDeepgram, type FakeDeepgram } from '../voice/fakes/deepgram.ts';
import { alignedInPieces, speechBounds, splitWav } from './support.ts';

const XI_KEY = 'xi-test-key-0123456789';
const DG_KEY = 'dg-test-key-0123456789';
const AGENT_NUMBER = '+12125550301';
const PHONE = '+12125550302';
const RATE = 8000;
const GREETING = 'Hello, this is Parley.';
const ANSWER = 'We open at nine tomorrow morning.';
/** This file's RTP ports (docs/testing.md): Parley's, then the phone's. */
const PORTS = { parley: '26400-26449', phone: '26450-26499' };

for (const dialect of DIALECTS) {
  describe(`a recorded SIP call through Kamailio, kept on disk and in S3 (${dialect})`, { timeout: 240_000 }, () => {
    let dir: string;
    let k: Kamailio;
    let tts: ElevenLabsFake;
    let stt: FakeDeepgram;
    let s3: TestS3;
    let phone: Baresip | null = null;
    let ask: Int16Array;
    const worlds: { name: 'disk' | 's3'; w: World }[] = [];

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'parley-sip-recording-'));
      tts = await startElevenLabsFake({ apiKey: XI_KEY, voiceId: 'Rachel', modelId: 'eleven_flash_v2_5', outputFormat: 'pcm_8000' });
      stt = await startFakeDeepgram({ apiKey: DG_KEY, model: 'nova-3', language: 'en' });
      s3 = await startTestS3();
      k = await startKamailio({ template: 'proxy', authFrom: '^[+]1212555030' });
      const line = await speechWav(dir, 'ask', 'When do you open tomorrow');
      ask = line.pcm;
      const pause = (s: number) => new Int16Array(RATE * s);
      const source = join(dir, 'phone.wav');
      await writeWav(source, Int16Array.from([pause(4), ask, pause(7)].flatMap((p) => [...p])));
      phone = await startBaresip({ user: PHONE, registrar: { host: '127.0.0.1', port: k.udpPort }, source, rtpPorts: PORTS.phone });
      for (const name of ['disk', 's3'] as const) {
        const w = await startWorld(dialect, {
          ELEVENLABS_API_KEY: XI_KEY, ELEVENLABS_BASE_URL: tts.url, DEEPGRAM_API_KEY: DG_KEY, DEEPGRAM_BASE_URL: stt.url,
          PARLEY_DIALER: 'sip', PARLEY_SIP_PORT: '0', PARLEY_RTP_PORTS: PORTS.parley, PARLEY_RING_SECONDS: '5', PARLEY_RETRY_BASE_SECONDS: '600',
          PARLEY_RECORDINGS_DIR: join(dir, name), ...(name === 's3' ? s3.env : {}),
        });
        worlds.push({ name, w });
      }
    });
    after(async () => {
      await phone?.stop();
      for (const { w } of worlds) await w.close();
      await k?.stop();
      await Promise.all([tts?.close(), stt?.close(), s3?.close()]);
      await rm(dir, { recursive: true, force: true });
    });

    for (const name of ['disk', 's3'] as const) {
      it(`records both sides as they went over RTP, stores the recording (${name}) and lines it up with the transcript`, { timeout: 120_000 }, async () => {
        const { w } = worlds.find((x) => x.name === name)!;
        const org = w.tenant.orgPath;
        const created = async (path: string, body: unknown) => {
          const res = await w.api('POST', `${org}${path}`, body);
          assert.equal(res.status, 201, JSON.stringify(res.body));
          return res.body.data.id as string;
        };
        const trunk = await created('/sip/credentials', { name: 'trunk', hostname: '127.0.0.1', port: k.udpPort, transport: 'udp', username: k.username, password: k.password, maxAgentTasks: 2 });
        const numberId = await created('/sip/numbers', { number: AGENT_NUMBER, sipCredentialId: trunk });
        const strategyId = await created('/llm-generation-strategies', {
          name: 'Phone', type: 'text_to_speech',
          parameters: { model: 'test-model', outputSampleRate: 8000, voice: { provider: 'elevenlabs', voiceId: 'Rachel', modelId: 'eleven_flash_v2_5' }, transcriber: { provider: 'deepgram', model: 'nova-3', language: 'en' } },
        });
        const agentId = await w.createAssistant({
          name: 'Agent', systemPromptGreeting: GREETING, llmAudioContentGenerationStrategyId: strategyId, telephoneNumberId: numberId, recording: { enabled: true },
        }, 'agents');
        stt.setScript([{ text: 'When do you open tomorrow?', seconds: (ask.length / RATE) * 0.6 }]);
        w.llm.respond = () => ({ text: ANSWER });
        const ttsFrom = tts.sent.length;
        const task = await w.api('POST', `${org}/agents/${agentId}/tasks`, { targetNumber: PHONE, execute: true });
        assert.equal(task.status, 201, JSON.stringify(task.body));
        const done = await settledTask(w, agentId, task.body.data.id, 90_000);
        assert.equal(done.status, 'COMPLETED', JSON.stringify(done));
        const listed = (await w.api('GET', `${org}/calls?agentId=${agentId}`)).body.data[0];
        const call = await until('the recording to be stored', async () => {
          await w.t.app.runner.tick();
          await w.t.app.runner.idle();
          return callRecord(w, listed.id);
        }, (c) => c.recording?.status === 'ready', 30_000);
        assert.equal(call.recording.sampleRate, 8000);
        assert.equal(call.recording.channels, 2);
        const download = (range?: string) => fetch(`${w.address}${org}/calls/${call.id}/recording`, {
          headers: { authorization: 'Bearer test-admin-token-with-enough-length', ...(range ? { range } : {}) },
        });
        const res = await download();
        assert.equal(res.status, 200);
        const wav = Buffer.from(await res.arrayBuffer());
        const { left, right, sampleRate } = splitWav(wav);
        assert.equal(sampleRate, RATE);
        const part = await download('bytes=70000-140123');
        assert.equal(part.status, 206);
        assert.ok(Buffer.from(await part.arrayBuffer()).equals(wav.subarray(70000, 140124)), 'the range is that part of the whole');
        const key = `${w.tenant.organizationId}/${call.id}.rec`;
        const sealed = name === 's3' ? (await s3.object(key))! : await readFile(join(dir, name, key));
        assert.equal(sealed.toString('latin1', 0, 6), 'PRLREC', 'what is kept is the sealed format, no WAV');
        assert.equal(sealed.indexOf(wav.subarray(44 + 40_000, 44 + 40_064)), -1, 'the audio is not in the clear');

        const entries = call.transcript.map((e: any) => [e.role, e.text]);
        assert.deepEqual(entries, [['assistant', GREETING], ['user', 'When do you open tomorrow?'], ['assistant', ANSWER]]);
        const [greeting, user, answer] = call.transcript;
        const sentences = tts.sent.slice(ttsFrom);
        // Each piece on its own, the worst quarter left out: a send the busy main thread made late
        // shifts what follows on the recording as on the wire (docs/testing.md).
        const pieces = { follow: true, leaveOut: 0.25, lateMs: 400 };
        const greet = alignedInPieces(sentences[0]!.pcm, right, RATE, greeting.startMs, pieces);
        assert.ok(greet.ncc >= 0.9, `the right channel holds the greeting at ${greeting.startMs} ms: NCC ${greet.ncc} (${greet.pieces})`);
        const said = alignedInPieces(sentences[1]!.pcm, right, RATE, answer.startMs, pieces);
        assert.ok(said.ncc >= 0.9, `the right channel holds the answer at ${answer.startMs} ms: NCC ${said.ncc} (${said.pieces})`);
        // The phone's side is what our jitter buffer played: when it runs dry on a busy machine it
        // plays silence and builds its depth up again, and it drops a frame when it runs too full,
        // so what follows moves by a frame or more, and the steps add up over the line. So the
        // line starts where the transcript says, within 40 ms, and each 200 ms piece follows the
        // one before within 40 ms (or up to 400 ms later, after a stall); the worst pieces up to a quarter of the energy are left out, as
        // for all RTP speech (docs/testing.md): a step spoils its piece, a wrong channel all of them.
        const bounds = speechBounds(ask, RATE);
        const spoken = ask.subarray(bounds.start, bounds.end);
        const heard = alignedInPieces(spoken, left, RATE, user.startMs, { pieceMs: 200, follow: true, leaveOut: 0.25, lateMs: 400 });
        assert.ok(heard.ncc >= 0.9, `the left channel holds what the phone said at ${user.startMs} ms: NCC ${heard.ncc} (${heard.pieces})`);
        if (name === 's3') assert.deepEqual(s3.refused, []);
      });
    }
  });
}
