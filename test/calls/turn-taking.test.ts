import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { DIALECTS } from '../helpers/dialects.ts';
import { until } from '../helpers/until.ts';
import { startElevenLabsFake, type ElevenLabsFake } from '../voice/fakes/elevenlabs.ts';
import { startFakeDeepgram, type FakeDeepgram } from '../voice/fakes/deepgram.ts';
import { scriptOf, utter } from '../voice/support/utterances.ts';
import { connect, talk, type CallClient } from './support/client.ts';
import { startReceiver, type Receiver } from './support/receiver.ts';
import { toolSchema } from '../helpers/fixtures.ts';
import { callRecord, startWorld, type World } from './support/world.ts';

/**
 * Turn-taking over the call WebSocket with real speech (espeak-ng), the real Silero VAD and
 * protocol-faithful fakes: each behaviour of docs/voice.md's "Turn-taking" once. Pauses are
 * longer than the thresholds they test by a wide margin, and what is asserted is order and
 * outcome, never a duration a busy machine could stretch: the figures are bench/turns.bench.ts's.
 */
const XI_KEY = 'xi-test-key-0123456789';
const DG_KEY = 'dg-test-key-0123456789';
const RATE = 16000;
const LONG = 'Our opening hours are from nine in the morning until six in the evening. On Saturdays we open at ten and close at four in the afternoon. '
  + 'On Sundays and public holidays the shop stays closed all day long. You can also order online at any time of the day or night.';

for (const dialect of DIALECTS) {
  describe(`turn-taking over the WebSocket (${dialect})`, { timeout: 240_000 }, () => {
    let w: World;
    let tts: ElevenLabsFake;
    let stt: FakeDeepgram;
    let tools: Receiver;
    const assistants: Record<string, string> = {};

    before(async () => {
      tts = await startElevenLabsFake({ apiKey: XI_KEY, voiceId: 'Rachel', modelId: 'eleven_flash_v2_5', outputFormat: 'pcm_16000' });
      stt = await startFakeDeepgram({ apiKey: DG_KEY, model: 'nova-3', language: 'en' });
      tools = await startReceiver();
      w = await startWorld(dialect, { ELEVENLABS_API_KEY: XI_KEY, ELEVENLABS_BASE_URL: tts.url, DEEPGRAM_API_KEY: DG_KEY, DEEPGRAM_BASE_URL: stt.url });
      const strategy = async (turn: Record<string, unknown>) => {
        const res = await w.api('POST', `${w.tenant.orgPath}/llm-generation-strategies`, {
          name: `Turns ${JSON.stringify(turn)}`, type: 'text_to_speech',
          parameters: { model: 'test-model', outputSampleRate: RATE, voice: { provider: 'elevenlabs', voiceId: 'Rachel', modelId: 'eleven_flash_v2_5' }, transcriber: { provider: 'deepgram', model: 'nova-3', language: 'en' }, turn },
        });
        assert.equal(res.status, 201, JSON.stringify(res.body));
        return res.body.data.id as string;
      };
      const extensions = [{ type: 'tool_webhook', parameters: { name: 'order_pizza', serverUrl: `${tools.url}/order`, schema: toolSchema('order_pizza') } }];
      // Generous silences: a busy machine must not turn a test of the rules into a race with them.
      assistants.smart = await w.createAssistant({ name: 'Smart', systemPromptGreeting: 'Hi.', extensions, llmAudioContentGenerationStrategyId: await strategy({ minSilence: 0.6, maxSilence: 3 }) });
    });
    after(async () => {
      await w.close();
      await Promise.all([tts.close(), stt.close(), tools.close()]);
    });

    async function open(name: string): Promise<{ id: string; client: CallClient }> {
      const call = await w.api('POST', `${w.tenant.orgPath}/assistants/${assistants[name]}/calls`, { audio: { encoding: 'pcm_s16le', sampleRate: RATE } });
      assert.equal(call.status, 201, JSON.stringify(call.body));
      const ttsFrom = tts.sent.length;
      const client = await connect(call.body.data.websocketUrl);
      await client.next('call_started');
      await client.next((f) => f.type === 'assistant_message' && f.text === 'Hi.');
      // The caller speaks once the greeting has played: speech over it would be speech over the assistant.
      const samples = () => client.audio.reduce((n, a) => n + a.bytes.length / 2, 0);
      await until('the greeting heard', () => tts.sent.length > ttsFrom && samples() >= (tts.sent[ttsFrom]?.pcm.length ?? Infinity), (done) => done, 15_000);
      return { id: call.body.data.id as string, client };
    }

    const requestsFrom = (from: number) => w.llm.requests.slice(from).map((r) => r.messages.at(-1)?.content);

    it('a complete question is answered once, speculatively begun; the record keeps its latency parts and its endpointing', async () => {
      const question = await utter({ said: 'When do you open tomorrow?' }, 1.5);
      stt.setScript(scriptOf(question));
      w.llm.respond = () => ({ text: 'We open at nine.' });
      const { id, client } = await open('smart');
      const before = w.llm.requests.length;
      await talk(client, question.pcm);
      assert.equal((await client.next((f) => f.type === 'user_transcript' && f.final)).text, 'When do you open tomorrow?');
      await client.next((f) => f.type === 'assistant_message' && f.text === 'We open at nine.');
      assert.deepEqual(requestsFrom(before), ['When do you open tomorrow?'], 'one LLM request for the turn: the speculative one, adopted');
      client.send({ type: 'end' });
      await client.closed;
      const call = await callRecord(w, id);
      const answer = call.transcript.findLast((e: any) => e.role === 'assistant');
      assert.equal(answer.endpointing, 'smart');
      const { endpointingMs, llmFirstTokenMs, ttsFirstAudioMs, totalMs } = answer.latency;
      assert.equal(endpointingMs + llmFirstTokenMs + ttsFirstAudioMs, totalMs, 'the parts add up');
      assert.ok(endpointingMs >= 590, `the turn waited its minSilence (a timer may fire a millisecond early): ${endpointingMs}`);
      assert.deepEqual(call.turnTaking, { falseInterruptions: 0, speculativeStarts: 1, speculativeDiscards: 0 });
      assert.deepEqual(call.turns.at(-1).latency, answer.latency);
    });

    it('a pause mid-thought and pauses between dictated groups stay inside one turn', async () => {
      const address = await utter({ said: 'I want to change my' }, 1.2, { said: 'delivery address.' }, 1.5);
      const number = await utter({ said: 'My number is 555', words: 'My number is five five five' }, 1.1, { said: '123', words: 'one two three' }, 1.1, { said: '4567.', words: 'four five six seven' }, 3.5);
      stt.setScript(scriptOf(address, number));
      w.llm.respond = () => ({ text: 'Sure.' });
      const { client } = await open('smart');
      const before = w.llm.requests.length;
      await talk(client, address.pcm);
      await client.next((f) => f.type === 'assistant_message' && f.text === 'Sure.');
      await client.next('turn_done');
      await talk(client, number.pcm);
      await until('the second answer', () => client.frames.filter((f) => f.type === 'assistant_message' && f.text === 'Sure.').length, (n) => n === 2, 20_000);
      assert.deepEqual(requestsFrom(before), ['I want to change my delivery address.', 'My number is 555 123 4567.'], 'one request per whole turn, none for a part');
      client.send({ type: 'end' });
      await client.closed;
    });

    it('a caller who goes on before the turn is confirmed drops the speculative answer, and its tool call is never sent', async () => {
      const order = await utter({ said: 'I would like a pizza.' }, 0.3, { said: 'But no onions.' }, 1.5);
      stt.setScript(scriptOf(order));
      w.llm.respond = (body) => (body.messages.at(-1).content === 'I would like a pizza.'
        ? { toolCalls: [{ id: 'call_1', name: 'order_pizza', arguments: '{"orderNumber":"1"}' }] }
        : { text: 'One pizza without onions.' });
      const toolsBefore = tools.requests.length;
      const { id, client } = await open('smart');
      const before = w.llm.requests.length;
      await talk(client, order.pcm);
      await client.next((f) => f.type === 'assistant_message' && f.text === 'One pizza without onions.');
      assert.deepEqual(requestsFrom(before), ['I would like a pizza.', 'I would like a pizza. But no onions.'], 'the speculative request, then the turn\'s');
      await sleep(300);
      assert.equal(tools.requests.length, toolsBefore, 'no tool webhook for the dropped answer');
      assert.ok(!client.frames.some((f) => f.type === 'tool_call'), 'nothing of it reached the caller');
      client.send({ type: 'end' });
      await client.closed;
      const call = await callRecord(w, id);
      assert.deepEqual(call.turnTaking, { falseInterruptions: 0, speculativeStarts: 2, speculativeDiscards: 1 });
      assert.deepEqual(call.transcript.filter((e: any) => e.role === 'user').map((e: any) => e.text), ['I would like a pizza. But no onions.']);
      assert.ok(!call.toolInvocations.length);
    });

    it('a backchannel and a wordless sound over the answer pause it, then it plays on whole; neither is a turn', async () => {
      const ask = await utter({ said: 'Tell me your hours.' }, 1.2);
      const yeah = await utter({ said: 'Yeah.' }, 1);
      const mumble = await utter({ said: '', words: 'hmm' }, 1);
      stt.setScript(scriptOf(ask, yeah, mumble));
      w.llm.respond = () => ({ text: LONG });
      const { id, client } = await open('smart');
      await talk(client, ask.pcm);
      await client.next((f) => f.type === 'assistant_message' && f.text === LONG);
      const llmBefore = w.llm.requests.length;
      await until('a second of the answer', () => client.audio.length, (n) => n > 60, 15_000);
      await talk(client, yeah.pcm);
      await client.next('turn_paused');
      await client.next('turn_resumed');
      await talk(client, mumble.pcm);
      await until('two pauses resumed', () => client.frames.filter((f) => f.type === 'turn_resumed').length, (n) => n === 2, 15_000);
      const resumedAt = client.frameTimes[client.frames.findLastIndex((f) => f.type === 'turn_resumed')] as number;
      await until('the answer plays on', () => client.audio.filter((a) => a.at > resumedAt).length, (n) => n > 10, 15_000);
      assert.ok(!client.frames.some((f) => f.type === 'interrupted'), JSON.stringify(client.frames.map((f) => f.type === 'user_transcript' ? `${f.type}:${f.text}` : f.type)));
      assert.equal(w.llm.requests.length, llmBefore, 'no turn for either sound');
      client.send({ type: 'end' });
      await client.closed;
      const call = await callRecord(w, id);
      assert.equal(call.turnTaking.falseInterruptions, 2);
      assert.deepEqual(call.transcript.filter((e: any) => e.role === 'user').map((e: any) => e.text), ['Tell me your hours.']);
    });

    it('a real barge-in stops the answer within 200 ms of the caller\'s speech, and the next request marks the cut answer', async () => {
      const ask = await utter({ said: 'Tell me your hours.' }, 1.2);
      const stop = await utter({ said: "Wait, stop, that's wrong.", words: 'wait stop that is wrong' }, 1.5);
      stt.setScript(scriptOf(ask, stop));
      w.llm.respond = (body) => ({ text: body.messages.at(-1).content === "Wait, stop, that's wrong." ? 'Sorry about that.' : LONG });
      const { client } = await open('smart');
      await talk(client, ask.pcm);
      await client.next((f) => f.type === 'assistant_message' && f.text === LONG);
      await until('a second of the answer', () => client.audio.length, (n) => n > 60, 15_000);
      const llmBefore = w.llm.requests.length;
      const talking = talk(client, stop.pcm);
      const paused = await client.next('turn_paused');
      const pausedAt = client.frameTimes[client.frames.indexOf(paused)] as number;
      const cut = await client.next('interrupted');
      await talking;
      const reply = await client.next((f) => f.type === 'assistant_message' && f.text === 'Sorry about that.');
      const replyAt = client.frameTimes[client.frames.indexOf(reply)] as number;
      const lastAudio = Math.max(...client.audio.filter((a) => a.at < replyAt).map((a) => a.at));
      assert.ok(lastAudio - pausedAt <= 200, `audio went on ${Math.round(lastAudio - pausedAt)} ms after the pause`);
      assert.ok(!client.frames.some((f) => f.type === 'turn_resumed'));
      const history = w.llm.requests[llmBefore].messages;
      assert.deepEqual(history.slice(-2), [{ role: 'assistant', content: `${cut.heard} [interrupted by the caller]` }, { role: 'user', content: "Wait, stop, that's wrong." }]);
      client.send({ type: 'end' });
      await client.closed;
    });
  });
}
