import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { DIALECTS } from '../helpers/dialects.ts';
import { startOpenAiRealtimeFake, type OpenAiRealtimeFake } from '../voice/fakes/openai-realtime.ts';
import { durationRatio, energyBounds, similarity } from '../voice/support/compare.ts';
import { sox, speechBytes } from '../voice/support/speech.ts';
import { bytesToSamples } from '../../src/voice/audio/pcm.ts';
import type { AudioFormat } from '../../src/voice/audio/format.ts';
import type { CallClient } from './support/client.ts';
import { connect } from './support/client.ts';
import { startReceiver, type Receiver } from './support/receiver.ts';
import { callRecord, startWorld, type World } from './support/world.ts';

const KEY = 'sk-realtime-e2e-0123456789abcdef';
const PROMPT = 'You are the front desk of a small shop.';
const GREETING = 'Hello, this is the front desk.';
const QUESTION = 'When do you open tomorrow?';
const HOURS = { type: 'object', properties: { day: { type: 'string' } }, required: ['day'] };
const LONG = 'Our opening hours are from nine in the morning until six in the evening. ' +
  'On Saturdays we open at ten and close at four in the afternoon. ' +
  'On Sundays and public holidays the shop stays closed all day long.';
const PCM16K: AudioFormat = { encoding: 'pcm_s16le', sampleRate: 16000 };
const MULAW: AudioFormat = { encoding: 'mulaw', sampleRate: 8000 };
const pcm24k = (rate = 24000): AudioFormat => ({ encoding: 'pcm_s16le', sampleRate: rate });

// The session.update the strategy below must give, spelled out as the GA Realtime API documents it.
const EXPECTED_SESSION = {
  type: 'realtime',
  model: 'gpt-realtime',
  instructions: PROMPT,
  output_modalities: ['audio'],
  audio: {
    input: {
      format: { type: 'audio/pcm', rate: 24000 },
      transcription: { model: 'gpt-4o-transcribe', language: 'en' },
      turn_detection: { type: 'server_vad', threshold: 0.6, prefix_padding_ms: 300, silence_duration_ms: 500, create_response: true, interrupt_response: true },
    },
    output: { format: { type: 'audio/pcm', rate: 24000 }, voice: 'marin', speed: 1.1 },
  },
  tools: [{ type: 'function', name: 'opening_hours', description: 'Opening hours of a day', parameters: HOURS }],
  tool_choice: 'auto',
};

const pcmOf = (bytes: Buffer) => bytesToSamples(Uint8Array.from(bytes));
const audioBytes = (client: CallClient, until = Infinity) => Buffer.concat(client.audio.filter((a) => a.at <= until).map((a) => a.bytes));
/** What the caller received, as PCM16 at the link's rate (mu-law decoded by sox, not by Parley). */
async function received(client: CallClient, format: AudioFormat): Promise<Int16Array> {
  const bytes = audioBytes(client);
  return format.encoding === 'mulaw' ? pcmOf(await sox(bytes, pcm24k(format.sampleRate), format)) : pcmOf(bytes);
}
const samplesOf = (client: CallClient, format: AudioFormat) => audioBytes(client).length / (format.encoding === 'mulaw' ? 1 : 2);
const speechPart = (pcm: Int16Array, rate: number) => {
  const { start, end } = energyBounds(pcm, rate);
  return pcm.subarray(start, end);
};

/** Sends wire audio as 20 ms binary frames in real time, as a microphone would. */
async function talk(client: CallClient, wire: Buffer, format: AudioFormat): Promise<void> {
  const frame = (format.sampleRate / 50) * (format.encoding === 'mulaw' ? 1 : 2);
  const start = performance.now();
  for (let i = 0, n = 0; i < wire.length; i += frame, n++) {
    client.sendAudio(wire.subarray(i, i + frame));
    const wait = start + (n + 1) * 20 - performance.now();
    if (wait > 0) await sleep(wait);
  }
}

/** Speech and then enough silence for the fake's turn detection, in the wire format. */
async function utterance(text: string, format: AudioFormat): Promise<Buffer> {
  const silence = Buffer.alloc(format.sampleRate * 0.6 * (format.encoding === 'mulaw' ? 1 : 2), format.encoding === 'mulaw' ? 0xff : 0);
  return Buffer.concat([await speechBytes(text, format), silence]);
}

for (const dialect of DIALECTS) {
  describe(`speech_to_speech calls over the WebSocket (${dialect})`, () => {
    let w: World;
    let fake: OpenAiRealtimeFake;
    let tools: Receiver;
    let assistantId: string;
    before(async () => {
      fake = await startOpenAiRealtimeFake({ apiKey: KEY, model: 'gpt-realtime', session: EXPECTED_SESSION, greeting: GREETING });
      tools = await startReceiver();
      // The Realtime model is reached at OPENAI_BASE_URL with OPENAI_API_KEY, like the LLM of text calls.
      w = await startWorld(dialect, { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: KEY });
      const strategy = await w.api('POST', `${w.tenant.orgPath}/llm-generation-strategies`, {
        name: 'Realtime', type: 'speech_to_speech',
        parameters: {
          model: 'gpt-realtime', voice: { voiceId: 'marin', speed: 1.1 },
          vad: { confidenceThreshold: 0.6, stopDuration: 0.5, backbufferDuration: 0.3, minVolume: 0.1 },
          // The server VAD with these settings (the default, smart, asks for the semantic VAD).
          turn: { endpointing: 'vad' },
          transcriber: { provider: 'openai', model: 'gpt-4o-transcribe', language: 'en-US' },
        },
      });
      assert.equal(strategy.status, 201, JSON.stringify(strategy.body));
      assistantId = await w.createAssistant({
        name: 'Front desk', systemPrompt: PROMPT, systemPromptGreeting: GREETING, llmAudioContentGenerationStrategyId: strategy.body.data.id,
        extensions: [{
          type: 'tool_webhook',
          parameters: {
            name: 'opening_hours', serverUrl: tools.url, headers: { Authorization: 'Bearer hook-token-7f1c' },
            schema: JSON.stringify({ name: 'opening_hours', description: 'Opening hours of a day', parameters: HOURS }),
          },
        }],
      });
    });
    beforeEach(() => {
      fake.chunkIntervalMs = 5;
      fake.refuseHandshakes = null;
    });
    after(async () => {
      await w.close();
      await fake.close();
      await tools.close();
    });

    async function open(audio: AudioFormat) {
      const call = await w.api('POST', `${w.tenant.orgPath}/assistants/${assistantId}/calls`, { audio });
      assert.equal(call.status, 201, JSON.stringify(call.body));
      const client = await connect(call.body.data.websocketUrl);
      assert.deepEqual((await client.next('call_started')).audio, audio);
      return { id: call.body.data.id as string, client, from: fake.sent.length };
    }

    /** Waits until the caller has received all the audio of the model's responses from `from` on (beyond `baseline` samples). */
    async function heardAll(client: CallClient, format: AudioFormat, from: number, baseline = 0) {
      const until = performance.now() + 15_000;
      for (;;) {
        const sent = fake.sent.slice(from).reduce((n, r) => n + r.pcm.length, 0) * (format.sampleRate / 24000);
        const heard = samplesOf(client, format) - baseline;
        if (sent > 0 && fake.sent.slice(from).every((r) => r.status !== 'in_progress') && heard >= sent - 40) return;
        if (performance.now() > until) throw new Error(`heard ${heard} of ${sent} samples`);
        await sleep(50);
      }
    }

    it('greets with the model\'s voice, passes the caller\'s speech to it over mu-law, runs its tool call through the webhook; the record has both sides, the tool, the latency and the provider', { timeout: 60_000 }, async () => {
      fake.setTurns([
        { transcript: QUESTION, toolCall: { name: 'opening_hours', arguments: '{"day":"tomorrow"}' }, reply: 'We open at nine tomorrow.' },
        { transcript: 'Thanks.', reply: 'Goodbye.' },
      ]);
      tools.answer = () => ({ body: '{"opens":"09:00"}', contentType: 'application/json' });
      const { id, client, from } = await open(MULAW);
      // The greeting: asked of the model word for word (the fake checks), heard as the model said it.
      await heardAll(client, MULAW, from);
      const greeting = fake.sent[from]!;
      assert.equal(greeting.text, GREETING);
      assert.equal((await client.next('assistant_message')).text, GREETING);
      const reference = pcmOf(await sox(Buffer.from(greeting.pcm.buffer, greeting.pcm.byteOffset, greeting.pcm.byteLength), pcm24k(8000), pcm24k()));
      const heard = await received(client, MULAW);
      const out = similarity(reference, heard.subarray(0, reference.length + 160), 64);
      assert.ok(out.ncc >= 0.9, `greeting NCC ${out.ncc}`);
      assert.ok(Math.abs(durationRatio(reference, heard) - 1) <= 0.05, `greeting duration ratio ${durationRatio(reference, heard)}`);

      // The caller asks, in mu-law at 8 kHz; the model gets 24 kHz PCM of the same speech.
      const appendedBefore = fake.appended().length;
      const heardBefore = samplesOf(client, MULAW);
      const wire = await utterance(QUESTION, MULAW);
      await talk(client, wire, MULAW);
      await client.next('speech_started');
      assert.deepEqual(await client.next((f) => f.type === 'user_transcript'), { type: 'user_transcript', text: QUESTION, final: true });
      const sent = speechPart(pcmOf(await sox(wire, pcm24k(), MULAW)), 24000);
      const got = speechPart(fake.appended().subarray(appendedBefore), 24000);
      assert.ok(Math.abs(durationRatio(sent, got) - 1) <= 0.05, `speech duration ratio ${durationRatio(sent, got)}`);
      assert.ok(similarity(sent, got, 240).ncc >= 0.9, `speech NCC ${similarity(sent, got, 240).ncc}`);

      // The model's tool call goes through the assistant's webhook; its result goes back, and the model answers.
      const call = await client.next('tool_call');
      assert.deepEqual({ ...call, id: '' }, { type: 'tool_call', id: '', name: 'opening_hours', arguments: '{"day":"tomorrow"}' });
      assert.equal((await client.next('tool_result')).ok, true);
      assert.equal((await client.next('assistant_message', 15_000)).text, 'We open at nine tomorrow.');
      await heardAll(client, MULAW, from + 1, heardBefore);
      assert.equal(tools.requests.length, 1);
      assert.equal(tools.requests[0]?.headers.authorization, 'Bearer hook-token-7f1c');
      assert.deepEqual(tools.requests[0]?.body, { type: 'tool_webhook', name: 'opening_hours', callId: id, transport: { type: 'websocket' }, parameters: { day: 'tomorrow' } });
      assert.deepEqual(fake.toolOutputs.at(-1), { callId: call.id, output: '{"opens":"09:00"}' });

      // A typed message goes to the model as a user item, and the model answers it aloud.
      const [typedFrom, typedBaseline] = [fake.sent.length, samplesOf(client, MULAW)];
      client.send({ type: 'user_message', text: 'Thanks.' });
      assert.equal((await client.next('assistant_message', 15_000)).text, 'Goodbye.');
      await heardAll(client, MULAW, typedFrom, typedBaseline);
      assert.deepEqual(fake.userTexts, ['Thanks.']);

      client.send({ type: 'end' });
      await client.closed;
      fake.violations.check();
      const record = await callRecord(w, id);
      assert.deepEqual(record.transcript.map((e: any) => [e.role, e.text]), [
        ['assistant', GREETING], ['user', QUESTION], ['assistant', 'We open at nine tomorrow.'], ['user', 'Thanks.'], ['assistant', 'Goodbye.'],
      ]);
      assert.equal(record.turns.length, 2);
      assert.ok(record.turns[0].latencyMs > 0 && record.turns[0].latencyMs < 5000, `latency ${record.turns[0].latencyMs}`);
      assert.deepEqual(record.toolInvocations.map((t: any) => [t.name, t.arguments, t.ok, t.statusCode, t.outcome]), [['opening_hours', { day: 'tomorrow' }, true, 200, 'ok']]);
      assert.deepEqual(record.providers, { realtime: 'openai' });
      assert.deepEqual(record.audio, MULAW);
      assert.equal(record.endReason, 'client_ended');
    });

    it('barge-in: the audio stops within 200 ms, the answer is truncated to what was heard and cancelled, and the transcript keeps the heard part', { timeout: 60_000 }, async () => {
      fake.setTurns([{ transcript: 'Tell me about the shop.', reply: LONG }, { transcript: 'Wait a moment', reply: 'Of course.' }]);
      const { id, client, from } = await open(PCM16K);
      await heardAll(client, PCM16K, from);
      const greetingBytes = audioBytes(client).length;
      fake.chunkIntervalMs = 60; // the answer streams a little faster than it plays, so it is still running when cut
      await talk(client, await utterance('Tell me about the shop.', PCM16K), PCM16K);
      await client.next('speech_started');
      await client.next('user_transcript');
      await client.next((f) => f.type === 'assistant_delta');
      while (audioBytes(client).length - greetingBytes < 16000 * 2) await sleep(20); // a second of the answer
      const talking = talk(client, await utterance('Wait a moment', PCM16K), PCM16K);
      const started = await client.next('speech_started');
      const startedAt = client.frameTimes[client.frames.indexOf(started)]!;
      const cut = await client.next('interrupted');
      await talking;
      const reply = await client.next((f) => f.type === 'assistant_delta', 15_000);
      const replyAt = client.frameTimes[client.frames.indexOf(reply)]!;
      const lastAudio = Math.max(...client.audio.filter((a) => a.at < replyAt).map((a) => a.at));
      assert.ok(lastAudio - startedAt <= 200, `audio went on ${Math.round(lastAudio - startedAt)} ms after the caller started speaking`);
      assert.ok(cut.heard.length > 0 && LONG.startsWith(cut.heard) && cut.heard.length < LONG.length, `heard: ${cut.heard}`);

      // Truncated to what went out before the cut, less what the client still had buffered (at most its 100 ms lead).
      const answer = fake.sent[from + 1]!;
      const outMs = ((audioBytes(client, startedAt).length - greetingBytes) / 2 / 16000) * 1000;
      // On a loaded machine the greeting's last frames may still be counted as playing, and be cut too.
      const truncation = fake.truncations.find((t) => t.itemId === answer.itemId);
      assert.ok(truncation, `the answer ${answer.itemId} was truncated: ${JSON.stringify(fake.truncations)}`);
      assert.ok(truncation.audioEndMs <= outMs && truncation.audioEndMs >= outMs - 120, `audio_end_ms ${truncation.audioEndMs} for ${outMs} ms sent`);
      assert.ok(fake.cancels >= 1, `${fake.cancels} cancels`);
      assert.equal(answer.status, 'cancelled');

      await client.next((f) => f.type === 'assistant_message' && f.text === 'Of course.', 15_000);
      await heardAll(client, PCM16K, from + 2, audioBytes(client, replyAt).length / 2);
      client.send({ type: 'end' });
      await client.closed;
      fake.violations.check();
      const record = await callRecord(w, id);
      assert.deepEqual(record.transcript.map((e: any) => [e.role, e.text, e.interrupted ?? false]), [
        ['assistant', GREETING, false], ['user', 'Tell me about the shop.', false], ['assistant', cut.heard, true],
        ['user', 'Wait a moment', false], ['assistant', 'Of course.', false],
      ]);
    });

    it('a Realtime failure (a refused key at the start, the socket closing mid-call) ends the call with an apology in the local voice, naming realtime:openai, with no socket left', { timeout: 60_000 }, async () => {
      const sockets = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;
      const baseline = sockets();

      fake.refuseHandshakes = 401;
      const refused = await open(PCM16K);
      assert.match((await refused.client.next('error', 15_000)).message, /realtime:openai failed \(HTTP 401/);
      assert.equal((await refused.client.next('call_ended', 15_000)).reason, 'error');
      assert.ok(refused.client.audio.length > 0, 'the apology was heard');
      const first = await callRecord(w, refused.id);
      assert.deepEqual(first.failure, { source: 'realtime:openai', statusCode: 401, message: 'handshake refused with HTTP 401' });
      assert.ok(first.transcript.some((e: any) => e.role === 'assistant' && /Sorry/.test(e.text)), 'the apology is in the record');
      assert.ok(!JSON.stringify(first).includes(KEY) && !w.logs().includes(KEY), 'the key is in neither the record nor the log');

      fake.refuseHandshakes = null;
      const { id, client } = await open(PCM16K);
      await client.next((f) => f.type === 'assistant_delta', 15_000);
      fake.closeConnections(1011, 'internal error');
      assert.match((await client.next('error', 15_000)).message, /realtime:openai failed/);
      assert.equal((await client.next('call_ended', 15_000)).reason, 'error');
      await client.closed;
      const record = await callRecord(w, id);
      assert.deepEqual(record.failure, { source: 'realtime:openai', statusCode: null, message: 'the Realtime socket closed (code 1011)' });
      assert.equal(record.endReason, 'error');
      for (let i = 0; i < 100 && sockets() > baseline; i++) await sleep(50);
      assert.ok(sockets() <= baseline, `${sockets() - baseline} sockets left open`);
      fake.violations.check();
    });
  });
}
