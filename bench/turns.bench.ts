/**
 * Turn-taking, measured: smart endpointing against vad (silence alone) in the same run, over the
 * call WebSocket, on a corpus of caller utterances made with espeak-ng (and sox's noise),
 * played in real time against protocol-faithful fakes with fixed, stated delays: the STT's
 * interim and final results come STT_MS after the audio (or the Finalize) that caused them, the
 * LLM's first token LLM_MS after its request, the TTS's first audio TTS_MS after its sentence.
 *
 * Printed for each mode: response latency on complete utterances (the last speech frame the
 * caller sent to the first audio frame of the answer it received, minus the three fixed
 * delays: our own share), false cut-offs (a turn ended inside a pause or a dictated number),
 * false interruptions (a backchannel or a noise that stopped the answer for good), missed
 * interruptions (a real barge-in whose answer audio went on more than 200 ms after the caller's
 * speech was detected) and LLM requests per turn (what speculation costs).
 * Run: npm run bench -- bench/turns.bench.ts
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, talk, type CallClient } from '../test/calls/support/client.ts';
import { startLlmServer } from '../test/calls/support/llm-server.ts';
import { buildTestApp, createTenant } from '../test/helpers/app.ts';
import { startFakeDeepgram } from '../test/voice/fakes/deepgram.ts';
import { startElevenLabsFake } from '../test/voice/fakes/elevenlabs.ts';
import { noise } from '../test/voice/support/speech.ts';
import { scriptOf, utter, type Utterance } from '../test/voice/support/utterances.ts';

const RATE = 16000;
const XI = 'xi-bench-key-0123456789';
const DG = 'dg-bench-key-0123456789';
const STT_MS = 100;
const LLM_MS = 200;
const TTS_MS = 150;
const FIXED_MS = STT_MS + LLM_MS + TTS_MS;
const ANSWER = 'Certainly, I can help with that.';
const LONG = 'Our opening hours are from nine in the morning until six in the evening. On Saturdays we open at ten and close at four in the afternoon. '
  + 'On Sundays and public holidays the shop stays closed all day long. You can also order online at any time of the day or night.';

const COMPLETE = [
  'When do you open tomorrow?', 'What time do you close on Saturday?', 'I would like to book a table for four.', 'Can I change my delivery address?',
  'Is the store open on Sunday?', 'How much does the large pizza cost?', 'I want to cancel my order.', 'Do you deliver to Berlin?',
  'My name is Anna Schmidt.', 'Please send me the invoice by email.', 'Where is my parcel right now?', 'Can I speak to a manager?',
  'I need a taxi to the airport.', 'That is all, thank you.', 'Do you have gluten free bread?', 'What is the status of my refund?',
];
/** Mid-thought pauses (ms) inside one turn, after words that do not end a sentence. */
const PAUSED: [string, number, string][] = [
  ['I want to change my', 400, 'delivery address.'], ['Can I get a pizza with', 600, 'extra cheese and olives?'],
  ['I was thinking about', 800, 'booking a room for Friday.'], ['The problem is that the', 1000, 'package never arrived.'],
  ['I would like to order', 500, 'two coffees to go.'], ['My account number is', 700, 'on the letter you sent.'],
  ['Could you tell me if', 900, 'the museum is open today?'], ['We need a table for', 450, 'six people at eight.'],
];
/** Numbers dictated with pauses (ms) between their groups. */
const DICTATED: [string, string][][] = [
  [['My number is 555', 'My number is five five five'], ['123', 'one two three'], ['4567.', 'four five six seven']],
  [['The order number is 42', 'The order number is four two'], ['817', 'eight one seven'], ['93.', 'nine three']],
  [['It is 0176', 'It is zero one seven six'], ['2248', 'two two four eight'], ['913.', 'nine one three']],
  [['My code is 8', 'My code is eight'], ['ZX', 'zed ex'], ['44.', 'four four']],
  [['Call me on 030', 'Call me on zero three zero'], ['7788', 'seven seven eight eight'], ['12.', 'one two']],
  [['The booking reference is 7', 'The booking reference is seven'], ['91', 'nine one'], ['335.', 'three three five']],
];
const BACKCHANNELS = ['yeah', 'uh-huh', 'okay', 'right', 'I see', 'mm-hmm'];
const BARGE_INS = ["Wait, stop, that's wrong.", 'No, I meant next week.', 'Hold on, I have a question.', 'Sorry, can you repeat that?', 'Stop, I already know that.', 'Actually I want something else.'];
const NOISES = [0.15, 0.25, 0.35, 0.5];

const pct = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil(p * values.length) - 1)] ?? NaN;
const rate = (n: number, of: number) => (of ? `${((100 * n) / of).toFixed(1)} %` : '-');

type Mode = 'smart' | 'vad';

async function world() {
  const tts = await startElevenLabsFake({ apiKey: XI, voiceId: 'Rachel', modelId: 'eleven_flash_v2_5', outputFormat: 'pcm_16000' });
  tts.firstChunkDelayMs = TTS_MS;
  const stt = await startFakeDeepgram({ apiKey: DG, model: 'nova-3', language: 'en', idleTimeoutMs: 600_000 });
  const llm = await startLlmServer();
  const t = await buildTestApp('sqlite', {
    PARLEY_EGRESS_ALLOW: '127.0.0.0/8', ELEVENLABS_API_KEY: XI, ELEVENLABS_BASE_URL: tts.url, DEEPGRAM_API_KEY: DG, DEEPGRAM_BASE_URL: stt.url,
    OPENAI_BASE_URL: llm.baseUrl, OPENAI_API_KEY: 'bench',
  });
  const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const tenant = await createTenant(t);
  const assistants = {} as Record<Mode, string>;
  for (const mode of ['smart', 'vad'] as const) {
    const strategy = (await t.call('POST', `${tenant.orgPath}/llm-generation-strategies`, { body: {
      name: mode, type: 'text_to_speech',
      parameters: { model: 'bench', outputSampleRate: RATE, voice: { provider: 'elevenlabs', voiceId: 'Rachel' }, transcriber: { provider: 'deepgram', model: 'nova-3', language: 'en' }, turn: { endpointing: mode } },
    } })).json().data.id;
    assistants[mode] = (await t.call('POST', `${tenant.orgPath}/assistants`, { body: { name: mode, llmAudioContentGenerationStrategyId: strategy } })).json().data.id;
  }
  const open = async (mode: Mode): Promise<{ id: string; client: CallClient }> => {
    const started = (await t.call('POST', `${tenant.orgPath}/assistants/${assistants[mode]}/calls`, { body: { audio: { encoding: 'pcm_s16le', sampleRate: RATE } } })).json().data;
    const client = await connect(started.websocketUrl.replace(/^ws:\/\/[^/]+/, base.replace('http', 'ws')));
    await client.next('call_started');
    return { id: started.id, client };
  };
  const record = async (id: string) => (await t.call('GET', `${tenant.orgPath}/calls/${id}`)).json().data;
  return { tts, stt, llm, open, record, close: async () => { await t.close(); await Promise.all([tts.close(), stt.close(), llm.close()]); } };
}

type World = Awaited<ReturnType<typeof world>>;

/** Waits until the assistant's audio has stopped for 400 ms: the caller speaks into silence, not over the assistant. */
async function quiet(client: CallClient): Promise<void> {
  const until = performance.now() + 20_000;
  while (performance.now() < until) {
    const last = client.audio.at(-1)?.at ?? 0;
    if (performance.now() - last > 400) return;
    await sleep(50);
  }
}

/** Speaks the utterance; answers when the first audio of the answer came, in ms after the last speech frame was sent. */
async function turn(w: World, client: CallClient, said: Utterance, trailing: number): Promise<number | null> {
  const audioBefore = client.audio.length;
  const start = performance.now();
  await talk(client, said.pcm);
  const lastSpeech = start + ((said.pcm.length - trailing * RATE) / RATE) * 1000;
  const until = performance.now() + 10_000;
  while (client.audio.length === audioBefore && performance.now() < until) await sleep(5);
  const first = client.audio[audioBefore];
  return first ? first.at - lastSpeech : null;
}

async function run(w: World, mode: Mode) {
  const out = { latencies: [] as number[], cutoffs: 0, cutoffCases: 0, falseBack: 0, falseNoise: 0, missed: 0, turns: 0, requests: 0 };
  const llmFrom = w.llm.requests.length;
  w.llm.respond = async (body) => {
    await sleep(LLM_MS);
    return { text: body.messages.at(-1)?.content === 'Tell me your hours.' ? LONG : ANSWER };
  };

  // Complete utterances, one call: each answered, its latency measured.
  {
    const said = await Promise.all(COMPLETE.map((text) => utter({ said: text }, 2.2)));
    w.stt.setScript(scriptOf(...said), { delayMs: STT_MS });
    const { id, client } = await w.open(mode);
    for (const [i, u] of said.entries()) {
      await quiet(client);
      const ms = await turn(w, client, u, 2.2);
      if (ms !== null) out.latencies.push(ms - FIXED_MS);
      console.log(`  ${mode.padEnd(5)} complete    ${JSON.stringify(COMPLETE[i])}: ${ms === null ? 'no answer' : `answered ${Math.round(ms)} ms after the last speech (our share ${Math.round(ms - FIXED_MS)} ms)`}`);
      await client.next('turn_done', 15_000);
    }
    client.send({ type: 'end' });
    await client.closed;
    out.turns += (await w.record(id)).transcript.filter((e: any) => e.role === 'user').length;
  }

  // Pauses inside a turn and dictated numbers: each must stay one turn.
  const inside = [
    ...await Promise.all(PAUSED.map(([a, ms, b]) => utter({ said: a }, ms / 1000, { said: b }, 2.5))),
    ...await Promise.all(DICTATED.map((groups) => utter(...groups.flatMap(([said, words], i) => [{ said, words }, i < groups.length - 1 ? 0.7 : 3.5])))),
  ];
  const insideNames = [...PAUSED.map(([a, ms, b]) => `paused    ${JSON.stringify(`${a} (${ms} ms) ${b}`)}`), ...DICTATED.map((g) => `dictated  ${JSON.stringify(g.map(([said]) => said).join(' (0.7 s) '))}`)];
  for (const [i, u] of inside.entries()) {
    w.stt.setScript(scriptOf(u), { delayMs: STT_MS });
    const { id, client } = await w.open(mode);
    await talk(client, u.pcm);
    await client.next('turn_done', 15_000).catch(() => undefined);
    client.send({ type: 'end' });
    await client.closed;
    const users = (await w.record(id)).transcript.filter((e: any) => e.role === 'user');
    out.turns += users.length;
    out.cutoffCases++;
    if (users.length !== 1) out.cutoffs++;
    console.log(`  ${mode.padEnd(5)} ${insideNames[i]}: ${users.length === 1 ? 'one turn' : `CUT into ${users.length} turns: ${JSON.stringify(users.map((e: any) => e.text))}`}`);
  }

  // Sounds over the answer: backchannels and noise must not stop it; barge-ins must within 200 ms of their detection.
  const ask = await utter({ said: 'Tell me your hours.' }, 1.2);
  const over = [
    ...await Promise.all(BACKCHANNELS.map(async (text) => ({ kind: 'backchannel' as const, name: text, u: await utter({ said: `${text[0]!.toUpperCase()}${text.slice(1)}.`, words: text.replace('-', ' ') }, 1.5) }))),
    ...await Promise.all(NOISES.map(async (seconds) => ({ kind: 'noise' as const, name: `${seconds} s of noise`, u: await utter({ sound: await noise(seconds) }, 1.5) }))),
    ...await Promise.all(BARGE_INS.map(async (text) => ({ kind: 'barge' as const, name: text, u: await utter({ said: text }, 1.5) }))),
  ];
  for (const { kind, name, u } of over) {
    w.stt.setScript(scriptOf(ask, u), { delayMs: STT_MS });
    const { id, client } = await w.open(mode);
    await talk(client, ask.pcm);
    const answerFrom = client.audio.length;
    const until = performance.now() + 10_000;
    while (client.audio.length - answerFrom < 60 && performance.now() < until) await sleep(10);
    const framesBefore = client.frames.length;
    await talk(client, u.pcm);
    await sleep(1000);
    const after = client.frames.slice(framesBefore);
    const interrupted = after.some((f) => f.type === 'interrupted');
    const paused = after.some((f) => f.type === 'turn_paused');
    let verdict = interrupted ? 'interrupted the answer' : paused ? 'paused it, then it resumed' : 'did not pause it';
    if (kind === 'backchannel' && interrupted) out.falseBack++;
    if (kind === 'noise' && interrupted) out.falseNoise++;
    if (kind === 'barge') {
      const started = after.find((f) => f.type === 'speech_started');
      const at = started ? client.frameTimes[client.frames.indexOf(started)]! : Infinity;
      const late = client.audio.filter((a) => a.at > at + 200 && a.at < at + 900);
      const missed = !interrupted || late.length > 0;
      if (missed) out.missed++;
      verdict += missed ? ` (MISSED: ${late.length} frames more than 200 ms after the speech was detected)` : ', within 200 ms';
      await client.next('turn_done', 15_000).catch(() => undefined);
    }
    console.log(`  ${mode.padEnd(5)} over-${kind.padEnd(11)} ${JSON.stringify(name)}: ${verdict}`);
    client.send({ type: 'end' });
    await client.closed;
    out.turns += (await w.record(id)).transcript.filter((e: any) => e.role === 'user').length;
  }
  out.requests = w.llm.requests.length - llmFrom;
  return out;
}

const w = await world();
console.log(`turn-taking bench: ${COMPLETE.length} complete, ${PAUSED.length} paused, ${DICTATED.length} dictated, ${BACKCHANNELS.length} backchannels, ${NOISES.length} noises, ${BARGE_INS.length} barge-ins `
  + `(${COMPLETE.length + PAUSED.length + DICTATED.length + BACKCHANNELS.length + NOISES.length + BARGE_INS.length} utterances); fixed delays STT ${STT_MS} ms, LLM ${LLM_MS} ms, TTS ${TTS_MS} ms`);
const results = {} as Record<Mode, Awaited<ReturnType<typeof run>>>;
for (const mode of ['vad', 'smart'] as const) results[mode] = await run(w, mode);
await w.close();

const row = (label: string, f: (r: Awaited<ReturnType<typeof run>>) => string) => console.log(`${label.padEnd(42)} ${f(results.smart).padStart(16)} ${f(results.vad).padStart(16)}`);
console.log(`${''.padEnd(42)} ${'smart'.padStart(16)} ${'vad (baseline)'.padStart(16)}`);
row('response latency, our share, p50', (r) => `${Math.round(pct(r.latencies, 0.5))} ms`);
row('response latency, our share, p95', (r) => `${Math.round(pct(r.latencies, 0.95))} ms`);
row('false cut-offs (pauses, dictation)', (r) => `${r.cutoffs}/${r.cutoffCases} (${rate(r.cutoffs, r.cutoffCases)})`);
row('false interruptions, backchannels', (r) => `${r.falseBack}/${BACKCHANNELS.length}`);
row('false interruptions, noise', (r) => `${r.falseNoise}/${NOISES.length} (${rate(r.falseNoise, NOISES.length)})`);
row('missed interruptions', (r) => `${r.missed}/${BARGE_INS.length}`);
row('LLM requests per turn', (r) => (r.requests / Math.max(1, r.turns)).toFixed(2));
const s = results.smart;
const checks: [string, boolean][] = [
  ['our share p50 <= 300 ms', pct(s.latencies, 0.5) <= 300],
  ['our share p95 <= 700 ms', pct(s.latencies, 0.95) <= 700],
  ['false cut-offs <= 5 %', s.cutoffs / s.cutoffCases <= 0.05],
  ['0 false interruptions from backchannels', s.falseBack === 0],
  ['false interruptions from noise <= 10 %', s.falseNoise / NOISES.length <= 0.1],
  ['0 missed interruptions', s.missed === 0],
  ['LLM requests per turn <= 1.6', s.requests / Math.max(1, s.turns) <= 1.6],
];
for (const [what, ok] of checks) console.log(`${ok ? 'met     ' : 'MISSED  '} ${what}`);
