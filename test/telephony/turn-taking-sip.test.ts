// Turn-taking on a SIP call: a task's call goes out through Kamailio to baresip, which plays
// espeak-ng speech on a timeline (a question, a backchannel over the answer, then a real
// interruption) and records what it hears. The voice's frames sit on the media thread up to
// its lead ahead: a pause flushes them there and a resume sends them again.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readWav, speechWav, writeWav } from '../helpers/audio.ts';
import { startBaresip, type Baresip } from '../helpers/baresip.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { startKamailio, type Kamailio } from '../helpers/kamailio.ts';
import { settledTask, startWorld, type World } from '../calls/support/world.ts';
import { startElevenLabsFake, type ElevenLabsFake } from '../voice/fakes/elevenlabs.ts';
import { startFakeDeepgram, type FakeDeepgram } from '../voice/fakes/deepgram.ts';

const XI_KEY = 'xi-test-key-0123456789';
const DG_KEY = 'dg-test-key-0123456789';
const AGENT_NUMBER = '+12125550201';
const PHONE = '+12125550202';
const LONG = 'Our opening hours are from nine in the morning until six in the evening. On Saturdays we open at ten and close at four in the afternoon. '
  + 'On Sundays and public holidays the shop stays closed all day long. You can also order online at any time of the day or night, and we deliver within two days. '
  + 'Parcels to other countries take up to a week, and you can follow them on our website with the number on your receipt.';
const RATE = 8000;

/** The RMS level of `pcm` between two times (s). */
function level(pcm: Int16Array, from: number, to: number): number {
  const part = pcm.subarray(Math.round(from * RATE), Math.round(to * RATE));
  let sum = 0;
  for (const v of part) sum += v * v;
  return Math.sqrt(sum / Math.max(1, part.length));
}

for (const dialect of DIALECTS) {
  describe(`turn-taking on a SIP call through Kamailio (${dialect})`, { timeout: 120_000 }, () => {
    let dir: string;
    let w: World;
    let k: Kamailio;
    let tts: ElevenLabsFake;
    let stt: FakeDeepgram;
    let phone: Baresip | null = null;
    const timeline = { askEnd: 0, yeahStart: 0, stopStart: 0 };

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'parley-sip-turns-'));
      tts = await startElevenLabsFake({ apiKey: XI_KEY, voiceId: 'Rachel', modelId: 'eleven_flash_v2_5', outputFormat: 'pcm_8000' });
      stt = await startFakeDeepgram({ apiKey: DG_KEY, model: 'nova-3', language: 'en' });
      k = await startKamailio({ template: 'proxy', authFrom: '^[+]1212555020' });
      w = await startWorld(dialect, {
        ELEVENLABS_API_KEY: XI_KEY, ELEVENLABS_BASE_URL: tts.url, DEEPGRAM_API_KEY: DG_KEY, DEEPGRAM_BASE_URL: stt.url,
        PARLEY_DIALER: 'sip', PARLEY_SIP_PORT: '0', PARLEY_RTP_PORTS: '21200-21249', PARLEY_RING_SECONDS: '5', PARLEY_RETRY_BASE_SECONDS: '600',
      });
      // The phone: the greeting, a question, a backchannel while the answer plays, then a real
      // interruption. The answer lasts about 25 s and begins a second or two after the question
      // on a quiet machine: the backchannel comes 7 s after the question, so a loaded machine that
      // starts the answer late still has it playing then. "okay", not "yeah": espeak's "yeah" is
      // about as long as the VAD's startDuration (0.2 s), so the VAD does not always call it speech.
      const [ask, yeah, stop] = [await speechWav(dir, 'ask', 'Tell me your hours'), await speechWav(dir, 'okay', 'okay'), await speechWav(dir, 'stop', 'wait stop that is wrong')];
      const pause = (s: number) => new Int16Array(RATE * s);
      const pieces = [pause(4), ask.pcm, pause(7), yeah.pcm, pause(6), stop.pcm, pause(20)];
      timeline.askEnd = 4 + ask.pcm.length / RATE;
      timeline.yeahStart = timeline.askEnd + 7;
      timeline.stopStart = timeline.yeahStart + yeah.pcm.length / RATE + 6;
      const source = join(dir, 'phone.wav');
      await writeWav(source, Int16Array.from(pieces.flatMap((p) => [...p])));
      stt.setScript([
        { text: 'Tell me your hours.', seconds: (ask.pcm.length / RATE) * 0.6 },
        { text: 'Okay.', seconds: (yeah.pcm.length / RATE) * 0.6 },
        { text: "Wait, stop, that's wrong.", seconds: (stop.pcm.length / RATE) * 0.6 },
      ]);
      phone = await startBaresip({ user: PHONE, registrar: { host: '127.0.0.1', port: k.udpPort }, source, rtpPorts: '21250-21299' });
    });
    after(async () => {
      await phone?.stop();
      await w?.close();
      await k?.stop();
      await Promise.all([tts?.close(), stt?.close()]);
      await rm(dir, { recursive: true, force: true });
    });

    it('a backchannel over the answer pauses it and it plays on; a real interruption cuts it and the next request marks the cut', async () => {
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
      const agentId = await w.createAssistant({ name: 'Agent', systemPromptGreeting: 'Hello, this is Parley.', llmAudioContentGenerationStrategyId: strategyId, telephoneNumberId: numberId }, 'agents');
      w.llm.respond = (body) => ({ text: body.messages.at(-1).content === "Wait, stop, that's wrong." ? 'Sorry about that.' : LONG });
      const llmFrom = w.llm.requests.length;
      const task = await w.api('POST', `${org}/agents/${agentId}/tasks`, { targetNumber: PHONE, execute: true });
      assert.equal(task.status, 201, JSON.stringify(task.body));
      // The phone hangs up when its file ends; the task completes then.
      const done = await settledTask(w, agentId, task.body.data.id, 90_000);
      assert.equal(done.status, 'COMPLETED', JSON.stringify(done));

      const call = (await w.api('GET', `${org}/calls?agentId=${agentId}`)).body.data[0];
      assert.equal(call.turnTaking.falseInterruptions, 1, JSON.stringify(call.turnTaking));
      assert.deepEqual(call.transcript.filter((e: any) => e.role === 'user').map((e: any) => e.text), ['Tell me your hours.', "Wait, stop, that's wrong."], `the backchannel was no turn: ${JSON.stringify(call.transcript.map((e: any) => [e.role, e.text, e.at]))}`);
      const cut = call.transcript.find((e: any) => e.role === 'assistant' && e.interrupted);
      assert.ok(cut && LONG.startsWith(cut.text) && cut.text.length < LONG.length, `the answer was cut where the caller spoke: ${JSON.stringify(cut)}`);
      const asked = w.llm.requests.slice(llmFrom).find((r) => r.messages.at(-1).content === "Wait, stop, that's wrong.");
      assert.deepEqual(asked?.messages.at(-2), { role: 'assistant', content: `${cut.text} [interrupted by the caller]` });
      const answer = call.transcript.find((e: any) => e.role === 'assistant' && e.latency);
      assert.equal(answer.endpointing, 'smart');

      // What the phone heard: the answer went on after the backchannel. baresip records the
      // frames it received, end to end (Parley sends no RTP while it has nothing to say), so its
      // recording is the greeting, the answer until the cut and the apology, without the gaps.
      // Had the backchannel stopped the answer, the answer heard could not be longer than from
      // the question's end to the backchannel (plus the link's lead and the detection: 1 s).
      const heard = (await readWav((await phone!.recordings()).heard)).pcm;
      const profile = Array.from({ length: Math.floor(heard.length / RATE) }, (_, s) => Math.round(level(heard, s, s + 1)));
      const spoken = (text: string) => (tts.sent.find((s) => s.text.trim() === text)?.pcm.length ?? NaN) / RATE;
      const cutAtBackchannel = spoken('Hello, this is Parley.') + spoken('Sorry about that.') + (timeline.yeahStart - timeline.askEnd) + 1;
      assert.ok(heard.length / RATE > cutAtBackchannel, `the answer plays on after the backchannel: the phone heard ${(heard.length / RATE).toFixed(1)} s, `
        + `at most ${cutAtBackchannel.toFixed(1)} s had it stopped there (levels per second: ${profile.join(' ')})`);
    });
  });
}
