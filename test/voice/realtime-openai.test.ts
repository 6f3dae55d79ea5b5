import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { OpenAiRealtimeClient, RealtimeError, type RealtimeOptions } from '../../src/voice/realtime/openai.ts';
import { realtimeUrl } from '../../src/voice/realtime/session-config.ts';
import { concatPcm, speak } from './fakes/audio.ts';
import { startOpenAiRealtimeFake, type OpenAiRealtimeFake } from './fakes/openai-realtime.ts';
import { activeHandles, assertNoHandlesBeyond } from './support.ts';

const KEY = 'sk-realtime-test-0123456789';
const WEATHER = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const wait = { signal: AbortSignal.timeout(20_000) };

// Spelled out as the GA Realtime API documents it, not computed by the code under test.
const EXPECTED_SESSION = {
  type: 'realtime',
  model: 'gpt-realtime',
  instructions: 'You are a helpful receptionist.',
  output_modalities: ['audio'],
  audio: {
    input: {
      format: { type: 'audio/pcm', rate: 24000 },
      transcription: { model: 'gpt-4o-mini-transcribe' },
      turn_detection: { type: 'server_vad', threshold: 0.6, prefix_padding_ms: 300, silence_duration_ms: 500, create_response: true, interrupt_response: true },
    },
    output: { format: { type: 'audio/pcm', rate: 24000 }, voice: 'marin' },
  },
  tools: [{ type: 'function', name: 'get_weather', description: 'Weather for a city', parameters: WEATHER }],
  tool_choice: 'auto',
};

/** Caller speech followed by enough silence to end the turn, sent in 20 ms pieces as a call would. */
async function say(client: OpenAiRealtimeClient, text: string): Promise<Int16Array> {
  const audio = concatPcm([await speak(text, 24000), new Int16Array(24000 * 0.6)]);
  for (let offset = 0; offset < audio.length; offset += 480) client.appendAudio(audio.subarray(offset, offset + 480));
  return audio;
}

describe('OpenAI Realtime client against its fake', () => {
  let fake: OpenAiRealtimeFake;
  let options: RealtimeOptions;
  before(async () => {
    fake = await startOpenAiRealtimeFake({ apiKey: KEY, model: 'gpt-realtime', session: EXPECTED_SESSION });
    options = {
      apiKey: KEY,
      baseUrl: fake.url,
      model: 'gpt-realtime',
      instructions: 'You are a helpful receptionist.',
      voice: 'marin',
      tools: [{ name: 'get_weather', description: 'Weather for a city', parameters: WEATHER }],
      vad: { confidenceThreshold: 0.6, stopDuration: 0.5, backbufferDuration: 0.3 },
    };
  });
  after(() => fake.close());

  it('derives the WebSocket URL from the OpenAI base URL', () => {
    assert.equal(realtimeUrl('https://api.openai.com/v1', 'gpt-realtime'), 'wss://api.openai.com/v1/realtime?model=gpt-realtime');
    assert.equal(realtimeUrl('http://127.0.0.1:8000/v1/', 'm'), 'ws://127.0.0.1:8000/v1/realtime?model=m');
  });

  it('configures the session, round-trips audio, and passes a tool call and its output', async () => {
    fake.setTurns([{ transcript: 'What is the weather in Berlin?', toolCall: { name: 'get_weather', arguments: '{"city":"Berlin"}' }, reply: 'It is sunny in Berlin.' }]);
    const client = await OpenAiRealtimeClient.connect(options);
    const received: Int16Array[] = [];
    client.on('audio', ({ pcm, sampleRate }) => {
      assert.equal(sampleRate, 24000);
      received.push(pcm);
    });
    const userTranscript = once(client, 'userTranscript', wait);
    const toolCall = once(client, 'toolCall', wait);
    const started = once(client, 'speechStarted', wait);
    const sentAudio = await say(client, 'What is the weather in Berlin?');
    await started;
    assert.deepEqual((await userTranscript)[0].text, 'What is the weather in Berlin?');
    const [call] = await toolCall;
    assert.equal(call.name, 'get_weather');
    assert.equal(call.arguments, '{"city":"Berlin"}');
    const transcript = once(client, 'assistantTranscript', wait);
    let done = once(client, 'responseDone', wait);
    client.sendToolResult(call.callId, '{"forecast":"sunny"}');
    while ((await done)[0].status !== 'completed' || received.length === 0) done = once(client, 'responseDone', wait);
    assert.equal((await transcript)[0].text, 'It is sunny in Berlin.');
    fake.violations.check();
    assert.deepEqual(fake.appended(), sentAudio, 'the caller audio arrived unchanged');
    assert.deepEqual(fake.toolOutputs, [{ callId: call.callId, output: '{"forecast":"sunny"}' }]);
    assert.deepEqual(concatPcm(received), fake.sent.at(-1)?.pcm, 'the assistant audio arrived unchanged');
    await client.close();
  });

  it('cancels a response and truncates the item to what was heard', async () => {
    fake.setTurns([{ transcript: 'Tell me a story.', reply: 'Once upon a time there was a very long story that went on and on and on for quite a while.' }]);
    fake.chunkIntervalMs = 20;
    const client = await OpenAiRealtimeClient.connect(options);
    const firstAudio = once(client, 'audio', wait);
    await say(client, 'Tell me a story.');
    const [{ itemId, pcm }] = await firstAudio;
    const done = once(client, 'responseDone', wait);
    client.cancelResponse();
    assert.equal((await done)[0].status, 'cancelled');
    const heardMs = Math.round((pcm.length / 24000) * 1000);
    client.truncate(itemId, heardMs);
    await client.close();
    fake.chunkIntervalMs = 5;
    fake.violations.check();
    assert.equal(fake.cancels, 1);
    assert.deepEqual(fake.truncations, [{ itemId, audioEndMs: heardMs }]);
    const response = fake.sent.at(-1);
    assert.equal(response?.status, 'cancelled');
    assert.ok((response?.pcm.length ?? 0) < (await speak(response?.text ?? '', 24000)).length, 'the rest of the answer was never sent');
  });

  it('a refused key is a RealtimeError with the HTTP status and without the key', async () => {
    await assert.rejects(OpenAiRealtimeClient.connect({ ...options, apiKey: 'sk-wrong-0000000000' }), (error: unknown) => {
      assert.ok(error instanceof RealtimeError);
      assert.equal(error.statusCode, 401);
      assert.ok(!error.message.includes('sk-wrong'));
      return true;
    });
  });

  it('a session config the server rejects fails connect, and nothing stays open', async () => {
    const baseline = activeHandles();
    await assert.rejects(OpenAiRealtimeClient.connect({ ...options, voice: 'alloy' }), (error: unknown) => error instanceof RealtimeError && error.code === 'fake_violation');
    fake.violations.list.length = 0; // that violation was the point of this test
    const client = await OpenAiRealtimeClient.connect(options);
    await client.close();
    await client.close();
    await assertNoHandlesBeyond(baseline);
  });
});
