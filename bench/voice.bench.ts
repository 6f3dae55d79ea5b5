/**
 * Voice calls, measured (issue 13):
 *  1. The pipeline's own latency per turn: from the VAD deciding the caller stopped speaking to the
 *     first frame of the answer sent, minus the fake providers' own delays (STT finalisation, LLM
 *     first token, TTS first audio), which are printed beside it. Target p50 < 30 ms.
 *  2. 50 concurrent voice calls on this machine, the service in its own process: how late its
 *     20 ms frames go out (p50/p99/max, from its /metrics) and its RSS, against the same service
 *     with one call, measured in the same run. Targets: p99 <= 20 ms, RSS < 400 MB. The service is
 *     the built one (dist/, as `npm start` runs it; scripts/bench.sh builds it first).
 * Run: npm run bench -- bench/voice.bench.ts
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, talk, type CallClient } from '../test/calls/support/client.ts';
import { startLlmServer } from '../test/calls/support/llm-server.ts';
import { ADMIN_TOKEN, buildTestApp, createTenant } from '../test/helpers/app.ts';
import { createTestDatabase } from '../test/helpers/dialects.ts';
import { freePort, kill, startService } from '../test/helpers/service-process.ts';
import { concatPcm } from '../test/voice/fakes/audio.ts';
import { startFakeDeepgram } from '../test/voice/fakes/deepgram.ts';
import { startElevenLabsFake } from '../test/voice/fakes/elevenlabs.ts';
import { silence, speech } from '../test/voice/support/speech.ts';

const RATE = 16000;
const XI = 'xi-bench-key-0123456789';
const DG = 'dg-bench-key-0123456789';
const TURNS = Number(process.env.VOICE_BENCH_TURNS ?? 15);
const CALLS = Number(process.env.VOICE_BENCH_CALLS ?? 50);
const LOAD_SECONDS = Number(process.env.VOICE_BENCH_SECONDS ?? 20);
const QUESTION = 'When do you open?';
const ANSWER = 'At nine.';

const pct = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil(p * values.length) - 1)] ?? NaN;

async function fakes() {
  const tts = await startElevenLabsFake({ apiKey: XI, voiceId: 'Rachel', modelId: 'eleven_flash_v2_5', outputFormat: 'pcm_16000' });
  tts.chunkIntervalMs = 0;
  const stt = await startFakeDeepgram({ apiKey: DG, model: 'nova-3', language: 'en', idleTimeoutMs: 600_000 });
  stt.setTranscript(QUESTION);
  const llm = await startLlmServer();
  llm.respond = () => ({ text: ANSWER });
  const env = { ELEVENLABS_API_KEY: XI, ELEVENLABS_BASE_URL: tts.url, DEEPGRAM_API_KEY: DG, DEEPGRAM_BASE_URL: stt.url, OPENAI_BASE_URL: llm.baseUrl, OPENAI_API_KEY: 'bench' };
  return { tts, stt, llm, env, close: () => Promise.all([tts.close(), stt.close(), llm.close()]) };
}

const STRATEGY = {
  name: 'Voice', type: 'text_to_speech',
  parameters: { model: 'bench', outputSampleRate: 16000, voice: { provider: 'elevenlabs', voiceId: 'Rachel' }, vad: { stopDuration: 0.5 }, transcriber: { provider: 'deepgram', model: 'nova-3', language: 'en' } },
};


async function latency(utterance: Int16Array) {
  const f = await fakes();
  const t = await buildTestApp('sqlite', { PARLEY_EGRESS_ALLOW: '127.0.0.0/8', ...f.env });
  const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const a = await createTenant(t);
  const strategy = (await t.call('POST', `${a.orgPath}/llm-generation-strategies`, { body: STRATEGY })).json().data.id;
  const assistant = (await t.call('POST', `${a.orgPath}/assistants`, { body: { name: 'Bench', llmAudioContentGenerationStrategyId: strategy } })).json().data.id;
  const started = (await t.call('POST', `${a.orgPath}/assistants/${assistant}/calls`, { body: { audio: { encoding: 'pcm_s16le', sampleRate: RATE } } })).json().data;
  const client = await connect(started.websocketUrl.replace(/^ws:\/\/[^/]+/, base.replace('http', 'ws')));
  await client.next('call_started');
  for (let turn = 0; turn < TURNS; turn++) {
    const sentBefore = f.tts.sent.length;
    await talk(client, utterance);
    await client.next('assistant_message', 15_000);
    while (f.tts.sent.length === sentBefore) await sleep(5);
    await sleep(700); // the answer plays out before the next question
  }
  client.send({ type: 'end' });
  await client.closed;
  const call = (await t.call('GET', `${a.orgPath}/calls/${started.id}`)).json().data;
  const answers = f.tts.sent.filter((s) => s.text === ANSWER);
  const ttsDelays = answers.map((s) => s.firstAudioDelayMs);
  const latencies = (call.turns as { latencyMs: number }[]).map((x) => x.latencyMs);
  const added = latencies.map((ms, i) => ms - (ttsDelays[i] ?? 0));
  await t.close();
  await f.close();
  return { latencies, ttsDelays, added };
}

function metric(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line ? Number(line.split(' ')[1]) : NaN;
}

async function load(calls: number, utterance: Int16Array) {
  const f = await fakes();
  const database = await createTestDatabase('sqlite');
  const port = await freePort();
  const service = await startService({
    ...f.env, PORT: String(port), DATABASE_URL: database.url, PARLEY_ADMIN_TOKEN: ADMIN_TOKEN, PARLEY_EGRESS_ALLOW: '127.0.0.0/8',
    PARLEY_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'), PARLEY_MAX_CALLS_PER_ORGANIZATION: String(calls + 10),
  }, { built: true });
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(service.base + path, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    return (await res.json()) as { data: any };
  };
  const vendor = (await api('POST', '/api/v1/vendors', { name: 'Bench' })).data.id;
  const org = `/api/v1/vendors/${vendor}/organizations/${(await api('POST', `/api/v1/vendors/${vendor}/organizations`, { name: 'Bench' })).data.id}`;
  const strategy = (await api('POST', `${org}/llm-generation-strategies`, STRATEGY)).data.id;
  const assistant = (await api('POST', `${org}/assistants`, { name: 'Bench', systemPromptGreeting: 'Hello, this is the front desk. How can I help?', llmAudioContentGenerationStrategyId: strategy })).data.id;
  const clients: CallClient[] = [];
  for (let i = 0; i < calls; i++) {
    const call = (await api('POST', `${org}/assistants/${assistant}/calls`, { audio: { encoding: 'pcm_s16le', sampleRate: RATE } })).data;
    const client = await connect(call.websocketUrl);
    await client.next('call_started');
    clients.push(client);
  }
  const until = performance.now() + LOAD_SECONDS * 1000;
  // Every caller talks in a loop: the VAD, the STT and a spoken answer for each call, all the time.
  await Promise.all(clients.map(async (client, i) => {
    await sleep((i * 37) % 1000);
    while (performance.now() < until) await talk(client, utterance);
  }));
  const metrics = await (await fetch(`${service.base}/metrics`)).text();
  const status = readFileSync(`/proc/${service.child.pid}/status`, 'utf8');
  const rssMb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]) / 1024;
  const hwmMb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]) / 1024;
  for (const client of clients) client.close();
  await kill(service.child);
  await database.drop();
  await f.close();
  return {
    frames: metric(metrics, 'parley_voice_frames_sent'),
    p50: metric(metrics, 'parley_voice_frame_lateness_ms', '{quantile="0.5"}'),
    p99: metric(metrics, 'parley_voice_frame_lateness_ms', '{quantile="0.99"}'),
    max: metric(metrics, 'parley_voice_frame_lateness_ms', '{quantile="1"}'),
    rssMb, hwmMb,
  };
}

async function main() {
  const utterance = concatPcm([await speech(QUESTION), silence(0.8)]);
  const turn = await latency(utterance);
  console.log(`voice: the pipeline's own latency per turn (VAD decided the speech ended -> first audio frame sent), ${turn.latencies.length} turns`);
  console.log(`  end to end       p50 ${pct(turn.latencies, 0.5)} ms  p95 ${pct(turn.latencies, 0.95)} ms`);
  console.log(`  fake providers   TTS first audio p50 ${pct(turn.ttsDelays, 0.5).toFixed(1)} ms (STT finalise and LLM first token answer at once)`);
  console.log(`  added by Parley  p50 ${pct(turn.added, 0.5).toFixed(1)} ms  p95 ${pct(turn.added, 0.95).toFixed(1)} ms  (target p50 < 30 ms)`);

  const one = await load(1, utterance);
  const many = await load(CALLS, utterance);
  console.log(`voice: concurrent calls talking for ${LOAD_SECONDS} s, the service in its own process`);
  for (const [label, r] of [['1 call (baseline)', one], [`${CALLS} calls`, many]] as const) {
    console.log(`  ${label.padEnd(18)} frames ${r.frames}  lateness p50 ${r.p50} ms  p99 ${r.p99} ms  max ${r.max.toFixed(1)} ms  RSS ${r.rssMb.toFixed(0)} MB (peak ${r.hwmMb.toFixed(0)} MB)`);
  }
  console.log(`  p99 lateness ${CALLS} calls / 1 call: ${(many.p99 / Math.max(one.p99, 0.1)).toFixed(1)}x  (target p99 <= 20 ms, RSS < 400 MB)`);
}

await main();
