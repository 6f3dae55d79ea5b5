import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { DIALECTS } from '../helpers/dialects.ts';
import { startElevenLabsFake, type ElevenLabsFake } from '../voice/fakes/elevenlabs.ts';
import { startFakeDeepgram, type FakeDeepgram } from '../voice/fakes/deepgram.ts';
import { concatPcm } from '../voice/fakes/audio.ts';
import { durationRatio, energyBounds, similarity } from '../voice/support/compare.ts';
import { bandLimited, silence, speech } from '../voice/support/speech.ts';
import { createDecoder, createEncoder, type AudioFormat } from '../../src/voice/audio/format.ts';
import type { CallClient } from './support/client.ts';
import { connect, talk } from './support/client.ts';
import { startReceiver } from './support/receiver.ts';
import { toolSchema } from '../helpers/fixtures.ts';
import { callRecord, startWorld, type World } from './support/world.ts';

const XI_KEY = 'xi-test-key-0123456789';
const DG_KEY = 'dg-test-key-0123456789';
const RATE = 16000;
const VOICE = { provider: 'elevenlabs', voiceId: 'Rachel', modelId: 'eleven_flash_v2_5', stability: 0.4, similarityBoost: 0.8, style: 0.1, useSpeakerBoost: true, speed: 1.1 };
const QUESTION = 'When do you open tomorrow?';

const pcmOf = (chunks: { bytes: Buffer }[]) => {
  const all = Buffer.concat(chunks.map((c) => c.bytes));
  return new Int16Array(all.buffer, all.byteOffset, Math.floor(all.length / 2));
};


/** The samples of `signal` between its energy bounds (where the speech is). */
function speechPart(signal: Int16Array): Int16Array {
  const { start, end } = energyBounds(signal, RATE);
  return signal.subarray(start, end);
}

for (const dialect of DIALECTS) {
  describe(`voice calls over the WebSocket (${dialect})`, () => {
    let w: World;
    let tts: ElevenLabsFake;
    let stt: FakeDeepgram;
    let assistantId: string;
    let question: Int16Array;
    before(async () => {
      tts = await startElevenLabsFake({
        apiKey: XI_KEY, voiceId: 'Rachel', modelId: 'eleven_flash_v2_5', outputFormat: 'pcm_16000',
        voiceSettings: { stability: 0.4, similarity_boost: 0.8, style: 0.1, use_speaker_boost: true, speed: 1.1 },
      });
      stt = await startFakeDeepgram({ apiKey: DG_KEY, model: 'nova-3', language: 'en' });
      w = await startWorld(dialect, { ELEVENLABS_API_KEY: XI_KEY, ELEVENLABS_BASE_URL: tts.url, DEEPGRAM_API_KEY: DG_KEY, DEEPGRAM_BASE_URL: stt.url });
      const strategy = await w.api('POST', `${w.tenant.orgPath}/llm-generation-strategies`, {
        name: 'Voice', type: 'text_to_speech',
        parameters: { model: 'test-model', outputSampleRate: 16000, voice: VOICE, vad: { stopDuration: 0.6 }, transcriber: { provider: 'deepgram', model: 'nova-3', language: 'en' } },
      });
      assert.equal(strategy.status, 201, JSON.stringify(strategy.body));
      assistantId = await w.createAssistant({ name: 'Front desk', systemPromptGreeting: 'Hello, this is the front desk.', llmAudioContentGenerationStrategyId: strategy.body.data.id });
      question = concatPcm([silence(0.4), await speech(QUESTION), silence(1.2)]);
    });
    after(async () => {
      await w.close();
      await tts.close();
      await stt.close();
    });

    async function open(audio = { encoding: 'pcm_s16le', sampleRate: RATE }) {
      const ttsFrom = tts.sent.length;
      const call = await w.api('POST', `${w.tenant.orgPath}/assistants/${assistantId}/calls`, { audio });
      assert.equal(call.status, 201, JSON.stringify(call.body));
      const client = await connect(call.body.data.websocketUrl);
      const started = await client.next('call_started');
      assert.deepEqual(started.audio, audio);
      return { id: call.body.data.id as string, client, ttsFrom };
    }

    /**
     * Waits until the caller has received, beyond the `baseline` samples it had, as many as the fake
     * TTS sent for its sentences from `from` on (`ratio`: samples the caller gets per TTS sample).
     */
    async function heardAll(client: CallClient, from: number, baseline = 0, deadlineMs = 15_000, samplesOf = (c: CallClient) => pcmOf(c.audio).length, ratio = 1) {
      const until = performance.now() + deadlineMs;
      for (;;) {
        const sent = Math.floor(tts.sent.slice(from).reduce((n, s) => n + s.pcm.length, 0) * ratio);
        const heard = samplesOf(client) - baseline;
        if (sent > 0 && heard >= sent) return;
        if (performance.now() > until) throw new Error(`heard ${heard} of ${sent} samples`);
        await sleep(50);
      }
    }

    it('greets aloud, hears the caller through the VAD and STT, and answers aloud; both sides are in the record', { timeout: 60_000 }, async () => {
      stt.setTranscript(QUESTION);
      w.llm.respond = () => ({ text: 'We open at nine. See you then!' });
      const { id, client, ttsFrom } = await open();
      // The greeting: what the caller hears is what the TTS made.
      await heardAll(client, ttsFrom);
      const greeting = tts.sent[ttsFrom];
      assert.equal(greeting?.text.trim(), 'Hello, this is the front desk.');
      assert.equal((await client.next('assistant_message')).text, 'Hello, this is the front desk.', 'the greeting is on the transcript too');
      const heard = pcmOf(client.audio);
      const match = similarity(greeting.pcm, heard.subarray(0, greeting.pcm.length + 320), 64);
      assert.ok(match.ncc >= 0.9, `greeting NCC ${match.ncc}`);
      assert.ok(Math.abs(durationRatio(greeting.pcm, heard) - 1) <= 0.05, `greeting duration ratio ${durationRatio(greeting.pcm, heard)}`);
      assert.deepEqual(tts.violations.list, []);

      // The caller asks; the STT gets the speech intact, the LLM the transcript.
      const before = stt.receivedAudio().length;
      const answerFrom = tts.sent.length;
      const greetingHeard = pcmOf(client.audio).length;
      await talk(client, question);
      const transcript = await client.next((f) => f.type === 'user_transcript' && f.final);
      assert.equal(transcript.text, QUESTION);
      const received = stt.receivedAudio().subarray(before);
      const sent = speechPart(question);
      const got = speechPart(received);
      assert.ok(Math.abs(durationRatio(sent, got) - 1) <= 0.05, `speech duration ratio ${durationRatio(sent, got)}`);
      assert.ok(similarity(sent, got, 160).ncc >= 0.9, `speech NCC ${similarity(sent, got, 160).ncc}`);
      await client.next('assistant_message');
      // The turn's request is the last: an answer begun speculatively on the interim words may come before it (docs/voice.md).
      assert.deepEqual(w.llm.requests.at(-1).messages.at(-1), { role: 'user', content: QUESTION });
      await heardAll(client, answerFrom, greetingHeard);

      client.send({ type: 'end' });
      await client.closed;
      const call = await callRecord(w, id);
      assert.deepEqual(call.transcript.map((e: any) => [e.role, e.text]), [
        ['assistant', 'Hello, this is the front desk.'], ['user', QUESTION], ['assistant', 'We open at nine. See you then!'],
      ]);
      assert.equal(call.turns.length, 1);
      assert.ok(call.turns[0].latencyMs > 0 && call.turns[0].latencyMs < 5000, `latency ${call.turns[0].latencyMs}`);
      assert.deepEqual(call.audio, { encoding: 'pcm_s16le', sampleRate: RATE });
      assert.deepEqual(call.providers, {
        llm: 'openai', tts: 'elevenlabs', stt: 'deepgram',
        turns: [{ turn: 0, tts: 'elevenlabs' }, { turn: 1, stt: 'deepgram', llm: 'openai', tts: 'elevenlabs' }],
      });
      assert.deepEqual(stt.problems, []);
    });

    it('a strategy naming no voice speaks with the local eSpeak voice; one naming a provider without a key fails at start, saying why', { timeout: 60_000 }, async () => {
      const strategy = async (voice: Record<string, unknown>) => (await w.api('POST', `${w.tenant.orgPath}/llm-generation-strategies`, {
        name: 'Plain', type: 'text_to_speech', parameters: { voice, transcriber: { provider: 'deepgram', model: 'nova-3', language: 'en' } },
      })).body.data.id as string;
      const plain = await w.createAssistant({ name: 'Local', systemPromptGreeting: 'Hello, this is the front desk.', llmAudioContentGenerationStrategyId: await strategy({}) });
      const started = await w.api('POST', `${w.tenant.orgPath}/assistants/${plain}/calls`, { audio: { encoding: 'pcm_s16le', sampleRate: RATE } });
      const client = await connect(started.body.data.websocketUrl);
      await client.next('call_started');
      // eSpeak speaks the greeting: about two seconds of real speech, with no account and no apt package.
      while (pcmOf(client.audio).length < RATE * 1.2) await sleep(50);
      const { start, end } = energyBounds(pcmOf(client.audio), RATE);
      assert.ok(end - start > RATE * 0.8, 'a second or more of speech');
      client.send({ type: 'end' });
      await client.closed;
      assert.deepEqual((await callRecord(w, started.body.data.id)).providers, { llm: 'openai', tts: 'espeak', stt: 'deepgram', turns: [{ turn: 0, tts: 'espeak' }] });

      const keyless = await w.createAssistant({ name: 'Keyless', llmAudioContentGenerationStrategyId: await strategy({ provider: 'cartesia' }) });
      const call = await w.api('POST', `${w.tenant.orgPath}/assistants/${keyless}/calls`, { audio: { encoding: 'pcm_s16le', sampleRate: RATE } });
      const failing = await connect(call.body.data.websocketUrl);
      assert.match((await failing.next('error')).message, /no cartesia key: add a cartesia provider credential to the organization, or set CARTESIA_API_KEY/);
      assert.equal((await failing.next('call_ended')).reason, 'error');
      const record = await callRecord(w, call.body.data.id);
      assert.deepEqual([record.failure.source, record.endReason], ['tts:cartesia', 'error']);
    });

    it('a tool that takes long is announced: a tool_waiting frame, and a spoken filler kept out of the LLM history', { timeout: 60_000 }, async () => {
      const receiver = await startReceiver();
      try {
        receiver.answer = () => ({ body: 'Order 42 ships Monday.', delayMs: 2_500 });
        const tooled = await w.createAssistant({
          name: 'Slow tools', llmAudioContentGenerationStrategyId: (await w.api('GET', `${w.tenant.orgPath}/assistants/${assistantId}`)).body.data.llmAudioContentGenerationStrategyId,
          extensions: [{ type: 'tool_webhook', parameters: { name: 'lookup_order', serverUrl: receiver.url, schema: toolSchema('lookup_order') } }],
        });
        w.llm.respond = (body) => (body.messages.at(-1).role === 'tool' ? { text: 'It ships Monday.' } : { toolCalls: [{ id: 'c1', name: 'lookup_order', arguments: '{"orderNumber":"42"}' }] });
        stt.setTranscript(QUESTION);
        const call = await w.api('POST', `${w.tenant.orgPath}/assistants/${tooled}/calls`, { audio: { encoding: 'pcm_s16le', sampleRate: RATE } });
        const client = await connect(call.body.data.websocketUrl);
        await client.next('call_started');
        const llmBefore = w.llm.requests.length;
        await talk(client, question);
        const waiting = await client.next('tool_waiting', 10_000);
        assert.deepEqual(waiting.names, ['lookup_order']);
        assert.ok(waiting.elapsedMs >= 1_400);
        await client.next((f) => f.type === 'assistant_message' && f.text === 'It ships Monday.', 15_000);
        const history = w.llm.requests.at(-1).messages;
        assert.ok(w.llm.requests.length > llmBefore);
        assert.ok(!history.some((m: any) => m.content === 'One moment, please.'), 'the filler is not in the history');
        while (!(await callRecord(w, call.body.data.id)).transcript.some((e: any) => e.text === 'It ships Monday.')) await sleep(100);
        client.send({ type: 'end' });
        await client.closed;
        const texts = (await callRecord(w, call.body.data.id)).transcript.map((e: any) => e.text);
        assert.ok(texts.includes('One moment, please.'), `the filler was heard: ${JSON.stringify(texts)}`);
      } finally {
        await receiver.close();
      }
    });

    it('a mu-law 8 kHz call: the speech survives the codec round trip both ways', { timeout: 60_000 }, async () => {
      stt.setTranscript(QUESTION);
      w.llm.respond = () => ({ text: 'We open at nine.' });
      const mulaw = { encoding: 'mulaw', sampleRate: 8000 };
      const { client, ttsFrom } = await open(mulaw);
      const decoded = (c: CallClient) => createDecoder({ encoding: 'mulaw', sampleRate: 8000 }, 8000).decode(Buffer.concat(c.audio.map((a) => a.bytes)));
      await heardAll(client, ttsFrom, 0, 15_000, (c) => decoded(c).length, 0.5);
      // What the TTS made, brought to 8 kHz, against what the caller decoded from mu-law.
      const made = createEncoder(RATE, { encoding: 'pcm_s16le', sampleRate: 8000 }).encode(tts.sent[ttsFrom]!.pcm);
      const reference = new Int16Array(made.buffer, made.byteOffset, made.length / 2);
      const got = decoded(client);
      assert.ok(similarity(reference, got.subarray(0, reference.length + 160), 64).ncc >= 0.9, `greeting NCC ${similarity(reference, got, 64).ncc}`);
      assert.ok(Math.abs(durationRatio(reference, got) - 1) <= 0.05);
      // The caller's speech as mu-law 8 kHz frames; the STT gets it at 16 kHz, band-limited by the codec.
      const before = stt.receivedAudio().length;
      const encoder = createEncoder(RATE, mulaw as AudioFormat);
      const wire = encoder.encode(question);
      const start = performance.now();
      for (let i = 0, n = 0; i < wire.length; i += 160, n++) {
        client.sendAudio(wire.subarray(i, i + 160));
        const wait = start + (n + 1) * 20 - performance.now();
        if (wait > 0) await sleep(wait);
      }
      assert.equal((await client.next((f) => f.type === 'user_transcript' && f.final)).text, QUESTION);
      const sent = speechPart(await bandLimited(question, RATE, 8000));
      const received = speechPart(stt.receivedAudio().subarray(before));
      assert.ok(Math.abs(durationRatio(sent, received) - 1) <= 0.05, `duration ratio ${durationRatio(sent, received)}`);
      assert.ok(similarity(sent, received, 160).ncc >= 0.9, `speech NCC ${similarity(sent, received, 160).ncc}`);
      client.send({ type: 'end' });
      await client.closed;
    });

    it('barge-in: the caller speaking over an answer stops its audio within 200 ms, and the LLM keeps only what was heard', { timeout: 60_000 }, async () => {
      const long = 'Our opening hours are from nine in the morning until six in the evening. ' +
        'On Saturdays we open at ten and close at four in the afternoon. ' +
        'On Sundays and public holidays the shop stays closed all day long. ' +
        'You can also order online at any time of the day or night.';
      stt.setTranscript(QUESTION);
      w.llm.respond = (body) => ({ text: body.messages.at(-1).content === 'Wait a moment' ? 'Of course.' : long });
      const { id, client, ttsFrom } = await open();
      await heardAll(client, ttsFrom);
      const greetingHeard = pcmOf(client.audio).length;
      await talk(client, question);
      await client.next((f) => f.type === 'assistant_message' && f.text === long);
      // Let a second or so of the answer play, then speak over it.
      while (pcmOf(client.audio).length - greetingHeard < RATE) await sleep(20);
      stt.setTranscript('Wait a moment');
      const llmBefore = w.llm.requests.length;
      const interruption = concatPcm([await speech('Wait a moment'), silence(1.2)]);
      const talking = talk(client, interruption);
      const started = await client.next('speech_started');
      const startedAt = client.frameTimes[client.frames.indexOf(started)] as number;
      const cut = await client.next('interrupted');
      await talking;
      const reply = await client.next((f) => f.type === 'assistant_message' && f.text === 'Of course.');
      const replyAt = client.frameTimes[client.frames.indexOf(reply)] as number;
      // The answer's audio, up to the reply to the interruption (whose audio follows its frame).
      const lastAudio = Math.max(...client.audio.filter((a) => a.at < replyAt).map((a) => a.at));
      assert.ok(lastAudio - startedAt <= 200, `audio went on ${Math.round(lastAudio - startedAt)} ms after the caller started speaking`);
      assert.ok(cut.heard.length > 0 && long.startsWith(cut.heard) && cut.heard.length < long.length, `heard: ${cut.heard}`);
      const history = w.llm.requests[llmBefore].messages;
      // The model is told what the caller heard, marked as cut there (docs/voice.md, "Turn-taking").
      assert.deepEqual(history.slice(-2), [{ role: 'assistant', content: `${cut.heard} [interrupted by the caller]` }, { role: 'user', content: 'Wait a moment' }]);
      client.send({ type: 'end' });
      await client.closed;
      const call = await callRecord(w, id);
      const answer = call.transcript.find((e: any) => e.interrupted);
      assert.deepEqual([answer?.role, answer?.text], ['assistant', cut.heard]);
    });

    it('a TTS provider failing mid-call: a spoken apology in the local voice, the call ends with reason error naming the provider, no socket left', { timeout: 60_000 }, async () => {
      stt.setTranscript(QUESTION);
      w.llm.respond = () => ({ text: 'Let me tell you all about our opening hours today.' });
      const sockets = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;
      const before = sockets();
      const { id, client, ttsFrom } = await open();
      await heardAll(client, ttsFrom);
      tts.dropAfterChunks = 1;
      const audioBefore = client.audio.length;
      await talk(client, question);
      const error = await client.next('error', 15_000);
      assert.match(error.message, /tts:elevenlabs failed/);
      assert.equal((await client.next('call_ended', 15_000)).reason, 'error');
      await client.closed;
      assert.ok(client.audio.length > audioBefore, 'the apology was heard');
      const call = await callRecord(w, id);
      assert.equal(call.failure.source, 'tts:elevenlabs');
      assert.equal(call.endReason, 'error');
      assert.ok(call.transcript.some((e: any) => e.role === 'assistant' && /Sorry/.test(e.text)), 'the apology is in the record');
      tts.dropAfterChunks = null;
      for (let i = 0; i < 100 && sockets() > before; i++) await sleep(50);
      assert.ok(sockets() <= before, `${sockets() - before} sockets left open`);
    });

    it('an STT provider failing mid-call ends the call the same way, naming it', { timeout: 60_000 }, async () => {
      const { id, client, ttsFrom } = await open();
      await heardAll(client, ttsFrom);
      stt.closeConnections(1011, 'internal error');
      await talk(client, question);
      assert.equal((await client.next('call_ended', 15_000)).reason, 'error');
      const call = await callRecord(w, id);
      assert.equal(call.failure.source, 'stt:deepgram');
    });
  });
}
