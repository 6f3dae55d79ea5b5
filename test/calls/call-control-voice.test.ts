import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { startFakeDeepgram, type FakeDeepgram } from '../voice/fakes/deepgram.ts';
import { energyBounds } from '../voice/support/compare.ts';
import { connect } from './support/client.ts';
import { callRecord, startWorld, type World } from './support/world.ts';

const DG_KEY = 'dg-test-key-0123456789';
const RATE = 16000;
const LAST = 'Thank you for calling, goodbye.';

const pcmOf = (chunks: { bytes: Buffer }[]) => {
  const all = Buffer.concat(chunks.map((c) => c.bytes));
  return new Int16Array(all.buffer, all.byteOffset, Math.floor(all.length / 2));
};

for (const dialect of DIALECTS) {
  describe(`end_call on a voice call (${dialect})`, () => {
    let w: World;
    let stt: FakeDeepgram;
    let assistantId: string;
    before(async () => {
      stt = await startFakeDeepgram({ apiKey: DG_KEY, model: 'nova-3', language: 'en' });
      w = await startWorld(dialect, { DEEPGRAM_API_KEY: DG_KEY, DEEPGRAM_BASE_URL: stt.url });
      // No voice named: the local eSpeak voice speaks (real audio, no account).
      const strategy = await w.api('POST', `${w.tenant.orgPath}/llm-generation-strategies`, {
        name: 'Local voice', type: 'text_to_speech',
        parameters: { model: 'test-model', outputSampleRate: RATE, voice: {}, transcriber: { provider: 'deepgram', model: 'nova-3', language: 'en' } },
      });
      assert.equal(strategy.status, 201, JSON.stringify(strategy.body));
      assistantId = await w.createAssistant({
        name: 'Menu', llmAudioContentGenerationStrategyId: strategy.body.data.id,
        extensions: [{ type: 'end_call', parameters: {} }],
      });
    });
    after(async () => {
      await w.close();
      await stt.close();
    });

    it('speaks the last sentence, sends all its audio, then ends as assistant_ended', { timeout: 60_000 }, async () => {
      w.llm.respond = (body) => (body.messages.at(-1).role === 'user'
        ? { toolCalls: [{ id: 'call_end', name: 'end_call', arguments: JSON.stringify({ message: LAST }) }] }
        : { text: 'This must never be spoken.' });
      const started = await w.api('POST', `${w.tenant.orgPath}/assistants/${assistantId}/calls`, { audio: { encoding: 'pcm_s16le', sampleRate: RATE } });
      assert.equal(started.status, 201, JSON.stringify(started.body));
      const client = await connect(started.body.data.websocketUrl);
      await client.next('call_started');
      const first = w.llm.requests.length;
      // A key on the web phone's keypad starts the turn (no speech needed).
      client.send({ type: 'dtmf', digits: '0#' });
      assert.equal((await client.next('dtmf')).digits, '0#');
      assert.equal((await client.next('assistant_message', 20_000)).text, LAST);
      assert.equal((await client.next('call_ended', 30_000)).reason, 'assistant_ended');
      await client.closed;
      assert.equal(w.llm.requests.length, first + 1, 'the LLM is not asked again');
      assert.deepEqual(w.llm.requests[first].messages.at(-1), { role: 'user', content: 'the caller pressed 0 #' });

      // The sentence was spoken before the socket closed: about two seconds of speech arrived.
      const audio = pcmOf(client.audio);
      const { start, end } = energyBounds(audio, RATE);
      assert.ok(end - start > RATE * 1.0, `a second or more of speech, got ${((end - start) / RATE).toFixed(2)} s`);
      const endedAt = client.frameTimes[client.frames.findIndex((f) => f.type === 'call_ended')] ?? 0;
      assert.ok(client.audio.every((a) => a.at <= endedAt), 'no audio after call_ended');

      const record = await callRecord(w, started.body.data.id);
      assert.equal(record.endReason, 'assistant_ended');
      assert.deepEqual(record.transcript.map((e: any) => [e.role, e.text]), [['dtmf', '0#'], ['assistant', LAST]]);
      assert.deepEqual(record.toolInvocations.map((i: any) => [i.name, i.type, i.outcome]), [['end_call', 'end_call', 'ok']]);
    });
  });
}
