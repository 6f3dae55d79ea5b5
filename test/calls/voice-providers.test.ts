// Every TTS provider of the registry that is reached over the network speaks in a WebSocket
// voice call: its organization's credential reaches its fake, the greeting the caller hears is the
// audio the fake sent (converted to the call's format), and the record names the provider. A
// provider added to the registry with its fake (test/voice/fakes/tts/) is tested here with no
// change to this file; twilio.test.ts and test/telephony/voices.test.ts do the same on their transports.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DIALECTS } from '../helpers/dialects.ts';
import { createTenant } from '../helpers/app.ts';
import { until } from '../helpers/until.ts';
import type { TtsFake } from '../voice/fakes/tts/contract.ts';
import { durationRatio, similarity } from '../voice/support/compare.ts';
import { connect, type CallClient } from './support/client.ts';
import { asHeardAt, SPEAKING_PROVIDERS, speakingStrategy, startTtsFakeOf } from './support/voices.ts';
import { callRecord, startWorld, type World } from './support/world.ts';

const KEY = 'tts-provider-key-0123456789abcdef';
const RATE = 16000;
const GREETING = 'Hello, you are speaking with the front desk.';

const samplesOf = (client: CallClient) => {
  const all = Buffer.concat(client.audio.map((c) => c.bytes));
  return new Int16Array(all.buffer, all.byteOffset, Math.floor(all.length / 2));
};

for (const dialect of DIALECTS) {
  describe(`every TTS provider speaks in a WebSocket voice call (${dialect})`, () => {
    let w: World;
    before(async () => {
      w = await startWorld(dialect);
    });
    after(() => w.close());

    for (const provider of SPEAKING_PROVIDERS) {
      it(`${provider}: the caller hears the greeting as the provider made it`, { timeout: 60_000 }, async () => {
        const fake: TtsFake = await startTtsFakeOf(provider, KEY, RATE);
        try {
          const tenant = await createTenant(w.t, `Speaks ${provider}`);
          const strategyId = await speakingStrategy(w, tenant.orgPath, provider, fake, KEY, RATE);
          const assistant = await w.api('POST', `${tenant.orgPath}/assistants`, { name: 'Front desk', systemPromptGreeting: GREETING, llmAudioContentGenerationStrategyId: strategyId });
          assert.equal(assistant.status, 201, JSON.stringify(assistant.body));
          const started = await w.api('POST', `${tenant.orgPath}/assistants/${assistant.body.data.id}/calls`, { audio: { encoding: 'pcm_s16le', sampleRate: RATE } });
          assert.equal(started.status, 201, JSON.stringify(started.body));
          const client = await connect(started.body.data.websocketUrl);
          await client.next('call_started');
          // The greeting is in the record once its last frame went out: the fake has sent all of it by then.
          const callId = started.body.data.id as string;
          await until('the greeting played', () => callRecord({ ...w, tenant }, callId), (record) => record.transcript.length > 0, 20_000);
          const greeting = fake.sent()[0];
          assert.equal(greeting?.text, GREETING);
          const reference = await asHeardAt(greeting.pcm, fake.sampleRate, RATE);
          await until('the greeting heard', async () => samplesOf(client).length, (n) => n >= reference.length, 5_000);
          const heard = samplesOf(client);
          const match = similarity(reference, heard.subarray(0, reference.length + 320), 64);
          assert.ok(match.ncc >= 0.9, `${provider} greeting NCC ${match.ncc}`);
          assert.ok(Math.abs(durationRatio(reference, heard) - 1) <= 0.05, `${provider} duration ratio ${durationRatio(reference, heard)}`);
          client.send({ type: 'end' });
          await client.closed;
          const record = await callRecord({ ...w, tenant }, callId);
          assert.equal(record.providers.tts, provider);
          assert.equal(record.failure, null);
          assert.deepEqual(fake.violations(), []);
        } finally {
          await fake.close();
        }
      });
    }
  });
}
