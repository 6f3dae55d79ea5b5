/**
 * Who answered, measured (issue 28). `parley serve` runs in its own process with PARLEY_DIALER=sip
 * and places agent tasks' calls; the providers are the fakes of the tests (the fake Deepgram
 * transcribes each far end perfectly, sentence by sentence, so the words are at their best). The
 * far end of every call is a bare UAS in this process that answers, plays one call of the corpus
 * (test/telephony/support/answering-corpus.ts: 20 people, 18 voicemail greetings, 6 screening
 * prompts, made by espeak-ng and sox) as 20 ms RTP, and timestamps every packet both ways.
 *  a. Accuracy overall and per class, and the confusion table, from the call records (answeredBy).
 *     Screening counts as right only as screening. Targets: >= 95 % overall, >= 98 % of people human.
 *  b. People: time from the start of their first speech to the agent's first audio at the UAS,
 *     p50/p95, with detection and without it (the same calls to an agent without
 *     voicemail_detection, in the same run: it greets at once). Target: added p50 <= 300 ms.
 *  c. Voicemail with leave_message: the beep's end (the send time of the frame holding its last
 *     sample) to the message's first packet at the UAS, p50/p95, and how many started before the beep
 *     ended; without a beep, how many started before the greeting ended. Targets: p95 <= 400 ms, 0.
 *     With the greeting said at the answer (the default), on every machine: the frame that decided
 *     (its send time) to the greeting's last packet at the UAS, i.e. how fast it was withdrawn.
 * VOICEMAIL_BENCH_GREETING=after_verdict runs the agent with the greeting after the verdict.
 *  d. Detector CPU per call: the detector over every call's frames in this process (what the media
 *     path runs for each 20 ms frame), as a share of one core, beside decoding and resampling the
 *     same frames for the STT (what every voice call does to its caller's audio). Target <= 2 %.
 *  Also printed: the accuracy of beep and cadence alone (no words), over the same corpus.
 * Run: npm run bench -- bench/voicemail.bench.ts   (VOICEMAIL_BENCH_ONLY=d for the CPU part alone)
 */
import dgram from 'node:dgram';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import alawmulaw from 'alawmulaw';
import { parseMessage, serializeMessage, type SipRequest } from '../src/sip/message.ts';
import { Pacer } from '../src/sip/rtp/pacer.ts';
import { FarEnd } from '../src/telephony/answering/far-end.ts';
import { greetingOver, judgeAnswer } from '../src/telephony/answering/verdict.ts';
import { createDecoder } from '../src/voice/audio/format.ts';
import { startLlmServer } from '../test/calls/support/llm-server.ts';
import { ADMIN_TOKEN } from '../test/helpers/app.ts';
import { createTestDatabase } from '../test/helpers/dialects.ts';
import { freeUdpPort } from '../test/helpers/kamailio.ts';
import { reply, request } from '../test/helpers/raw-sip-peer.ts';
import { freePort, kill, startService } from '../test/helpers/service-process.ts';
import { until } from '../test/helpers/until.ts';
import { buildCall, corpusSpecs, type AnswerClass, type CorpusCall } from '../test/telephony/support/answering-corpus.ts';
import { startFakeDeepgram } from '../test/voice/fakes/deepgram.ts';
import { startElevenLabsFake } from '../test/voice/fakes/elevenlabs.ts';

const XI = 'xi-bench-key-0123456789';
const DG = 'dg-bench-key-0123456789';
const MESSAGE = 'Hi {{firstName}}, this is Parley about your order. Please call us back.';
const RTP_PORT = 26900;
const CLASSES: AnswerClass[] = ['human', 'voicemail', 'screening'];
const VERDICTS = ['human', 'voicemail', 'screening', 'unknown'] as const;

const pct = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil(p * values.length) - 1)] ?? NaN;
const ms = (v: number) => `${v.toFixed(0)} ms`;

/** What the far end saw of one call: when each of its frames went out, when our packets came. */
interface Heard {
  /** performance.now() when frame k of the file was sent, and how late that was after its place on the 20 ms grid. */
  sentAt: number[];
  lateMs: number[];
  /** performance.now() when the first audio packet of the agent arrived (null: none). */
  firstAudioAt: number | null;
  /** performance.now() of every audio packet of the agent (the greeting, then a message). */
  audioAt: number[];
  ended: Promise<void>;
}

/**
 * A bare UAS on loopback: answers each INVITE with PCMU on RTP_PORT, plays the call's file as
 * paced 20 ms RTP from the answer on, notes our audio, and hangs up when the file has played
 * (or `hangUpAfterAudioMs` after our first audio). One call at a time.
 */
async function farEnd() {
  const sip = dgram.createSocket('udp4');
  const rtp = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => sip.bind(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => rtp.bind(RTP_PORT, '127.0.0.1', resolve));
  let current: { call: CorpusCall; heard: Heard; hangUpAfterAudioMs: number | null; done: () => void } | null = null;
  let remoteRtp: { address: string; port: number } | null = null;
  let dialog: { invite: SipRequest; from: { address: string; port: number }; pacer: Pacer; closed: boolean } | null = null;

  const hangUp = () => {
    if (!dialog || dialog.closed) return;
    dialog.closed = true;
    dialog.pacer.stop();
    const { invite, from } = dialog;
    const contact = /<([^>]+)>/.exec(invite.headers.get('Contact') ?? '')?.[1] ?? `sip:parley@${from.address}:${from.port}`;
    sip.send(serializeMessage(request('BYE', contact, sip.address().port, {
      From: `${invite.headers.get('To') ?? ''};tag=uas`, To: invite.headers.get('From') ?? '', 'Call-ID': invite.headers.get('Call-ID') ?? '', CSeq: '1 BYE',
    })), from.port, from.address);
    current?.done();
  };

  rtp.on('message', (packet, from) => {
    // Only this call's media: the last call's final frames may still be on their way.
    if (!current || !remoteRtp || from.port !== remoteRtp.port || packet.length <= 12) return;
    const pcm = alawmulaw.mulaw.decode(packet.subarray(12));
    let energy = 0;
    for (const s of pcm) energy += s * s;
    if (Math.sqrt(energy / pcm.length) < 100) return; // comfort silence is not the agent speaking
    current.heard.audioAt.push(performance.now());
    if (current.heard.firstAudioAt !== null) return;
    current.heard.firstAudioAt = performance.now();
    if (current.hangUpAfterAudioMs !== null) {
      // A person hangs up once the agent has spoken and they have said their first words and
      // paused (the verdict waits for the pause; the baseline greets before they speak).
      const words = current.call.firstSpeechEndMs - current.heard.sentAt.length * 20;
      setTimeout(hangUp, Math.max(current.hangUpAfterAudioMs, words + 1500));
    }
  });

  sip.on('message', (buf, from) => {
    const msg = parseMessage(buf);
    if (msg.kind !== 'request') return;
    if (msg.method === 'BYE') {
      sip.send(serializeMessage(reply(msg, 200, 'OK')), from.port, from.address);
      if (dialog) {
        dialog.closed = true;
        dialog.pacer.stop();
      }
      current?.done();
      return;
    }
    if (msg.method !== 'INVITE' || !current) return;
    const offer = msg.body.toString();
    remoteRtp = { address: /c=IN IP4 (\S+)/.exec(offer)?.[1] ?? '127.0.0.1', port: Number(/m=audio (\d+)/.exec(offer)?.[1]) };
    const sdp = `v=0\r\no=uas 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio ${RTP_PORT} RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\na=ptime:20\r\n`;
    sip.send(serializeMessage(reply(msg, 200, 'OK', { toTag: 'uas', headers: { Contact: `<sip:uas@127.0.0.1:${sip.address().port}>` }, body: sdp })), from.port, from.address);
    if (dialog?.invite.headers.get('Call-ID') === msg.headers.get('Call-ID')) return; // a retransmission
    const { call, heard } = current;
    const payload = Buffer.from(alawmulaw.mulaw.encode(call.pcm));
    const header = Buffer.alloc(12);
    let k = 0;
    const pacer = new Pacer(20, (tick) => {
      if (k * 160 >= payload.length) return hangUp();
      heard.lateMs.push(tick.lateMs);
      header[0] = 0x80;
      header[1] = k === 0 ? 0x80 : 0;
      header.writeUInt16BE(k & 0xffff, 2);
      header.writeUInt32BE(k * 160, 4);
      header.writeUInt32BE(0x5eed, 8);
      heard.sentAt.push(performance.now());
      rtp.send(Buffer.concat([header, payload.subarray(k * 160, k * 160 + 160)]), remoteRtp!.port, remoteRtp!.address);
      k += 1;
    });
    dialog = { invite: msg, from: { address: from.address, port: from.port }, pacer, closed: false };
    pacer.start();
  });

  return {
    port: sip.address().port,
    /** Plays `call` as the far end of the next call placed to this UAS. */
    expect(call: CorpusCall, hangUpAfterAudioMs: number | null): Heard {
      let done = () => {};
      const ended = new Promise<void>((resolve) => (done = resolve));
      const heard: Heard = { sentAt: [], lateMs: [], firstAudioAt: null, audioAt: [], ended };
      dialog = null;
      remoteRtp = null;
      current = { call, heard, hangUpAfterAudioMs, done };
      return heard;
    },
    close() {
      sip.close();
      rtp.close();
    },
  };
}

/** The service, the fake providers, a tenant, a voice strategy and two agents calling the UAS: with detection and without. */
async function world(uasPort: number) {
  const tts = await startElevenLabsFake({ apiKey: XI, voiceId: 'Rachel', modelId: 'eleven_flash_v2_5', outputFormat: 'pcm_8000' });
  const stt = await startFakeDeepgram({ apiKey: DG, model: 'nova-3', language: 'en', idleTimeoutMs: 600_000 });
  const llm = await startLlmServer();
  llm.respond = () => ({ text: 'Thank you.' });
  const database = await createTestDatabase('sqlite');
  const service = await startService({
    PORT: String(await freePort()), DATABASE_URL: database.url, PARLEY_ADMIN_TOKEN: ADMIN_TOKEN, PARLEY_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
    PARLEY_EGRESS_ALLOW: '127.0.0.0/8', PARLEY_SCHEDULER: 'on', PARLEY_DIALER: 'sip', PARLEY_SIP_PORT: String(await freeUdpPort()), PARLEY_RTP_PORTS: '26000-26099',
    PARLEY_RING_SECONDS: '20', PARLEY_RETRY_BASE_SECONDS: '3600', PARLEY_TASK_MAX_VOICEMAILS: '10',
    ELEVENLABS_API_KEY: XI, ELEVENLABS_BASE_URL: tts.url, DEEPGRAM_API_KEY: DG, DEEPGRAM_BASE_URL: stt.url, OPENAI_BASE_URL: llm.baseUrl, OPENAI_API_KEY: 'bench',
  }, { built: true, startTimeoutMs: 60_000 });
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(service.base + path, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
    const json = (await res.json()) as { data: any };
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json.data;
  };
  const vendor = (await api('POST', '/api/v1/vendors', { name: 'Bench' })).id;
  const org = `/api/v1/vendors/${vendor}/organizations/${(await api('POST', `/api/v1/vendors/${vendor}/organizations`, { name: 'Bench' })).id}`;
  const strategy = (await api('POST', `${org}/llm-generation-strategies`, {
    name: 'Phone', type: 'text_to_speech',
    parameters: { model: 'bench', outputSampleRate: 8000, voice: { provider: 'elevenlabs', voiceId: 'Rachel' }, vad: { stopDuration: 0.6 }, transcriber: { provider: 'deepgram', model: 'nova-3', language: 'en' } },
  })).id;
  const cred = (await api('POST', `${org}/sip/credentials`, { name: 'uas', maxAgentTasks: 5, hostname: '127.0.0.1', port: uasPort, username: 'bench', password: 'secret' })).id;
  const agent = async (n: number, extensions: unknown[]) => {
    const number = (await api('POST', `${org}/sip/numbers`, { number: `+1212555030${n}`, sipCredentialId: cred })).id;
    return (await api('POST', `${org}/agents`, { name: `Agent ${n}`, llmAudioContentGenerationStrategyId: strategy, telephoneNumberId: number, systemPromptGreeting: 'Hello, this is Parley calling about your order.', extensions })).id as string;
  };
  const greeting = process.env.VOICEMAIL_BENCH_GREETING ?? 'at_answer';
  const detecting = await agent(1, [{ type: 'voicemail_detection', parameters: { action: 'leave_message', message: MESSAGE, greeting } }]);
  const plain = await agent(2, []);
  /** One task of `agentId` to completion of its attempt: its call record. */
  const call = async (agentId: string) => {
    const task = (await api('POST', `${org}/agents/${agentId}/tasks`, { targetNumber: '+12125550999', userValues: { firstName: 'Ada' }, execute: true })).id;
    const attempt = await until('the attempt', async () => (await api('GET', `${org}/agents/${agentId}/tasks/${task}/attempts`))[0], (a) => a?.endedAt, 90_000, 100);
    return api('GET', `${org}/calls/${attempt.callId}`);
  };
  return {
    tts, stt, detecting, plain, call,
    async close() {
      await kill(service.child);
      await database.drop();
      await Promise.all([tts.close(), stt.close(), llm.close()]);
    },
  };
}

/** a-c: every corpus call through the dialer; the people once more to the agent without detection. */
async function live(corpus: CorpusCall[]) {
  const uas = await farEnd();
  const w = await world(uas.port);
  const results: { call: CorpusCall; verdict: string; heard: Heard; record: any }[] = [];
  const baseline: { call: CorpusCall; heard: Heard }[] = [];
  try {
    const kinds = (process.env.VOICEMAIL_BENCH_KINDS ?? 'human,voicemail,screening').split(',');
    for (const call of corpus.filter((c) => kinds.includes(c.kind))) {
      w.stt.setTranscripts(call.sentences);
      const heard = uas.expect(call, call.kind === 'human' ? 1000 : null);
      const record = await w.call(w.detecting);
      await Promise.race([heard.ended, new Promise((r) => setTimeout(r, 5000))]);
      results.push({ call, verdict: record.answeredBy ?? 'none', heard, record });
      process.stdout.write(`  ${call.kind.padEnd(9)} -> ${String(record.answeredBy).padEnd(9)} ${record.detection?.action ?? ''}  ${call.spec.name}\n`);
    }
    for (const call of corpus.filter((c) => c.kind === 'human' && kinds.includes('human'))) {
      w.stt.setTranscripts(call.sentences);
      const heard = uas.expect(call, 1000);
      await w.call(w.plain);
      await Promise.race([heard.ended, new Promise((r) => setTimeout(r, 5000))]);
      baseline.push({ call, heard });
    }
  } finally {
    await w.close();
    uas.close();
  }
  return { results, baseline };
}

/** When the far end had played its file up to `fileMs`: the send time of the frame holding the sample just before it. */
const playedTo = (heard: Heard, fileMs: number) => heard.sentAt[Math.ceil(fileMs / 20) - 1] ?? NaN;
/** When the far end began to play its file at `fileMs`: the send time of the frame holding that sample. */
const playedFrom = (heard: Heard, fileMs: number) => heard.sentAt[Math.floor(fileMs / 20)] ?? NaN;

/** When (far-end ms) the call's detection noted `signal`, or null. */
const signalAt = (record: any, signal: string): number | null => record.detection?.signals?.find((s: { signal: string }) => s.signal === signal)?.atMs ?? null;

function report({ results, baseline }: Awaited<ReturnType<typeof live>>) {
  const n = results.length;
  const right = results.filter((r) => r.verdict === r.call.kind).length;
  console.log(`\nvoicemail: ${n} answered calls through the SIP dialer on loopback (service in its own process; words from a fake STT that transcribes perfectly)`);
  console.log(`  accuracy ${(100 * right / n).toFixed(1)} % (${right}/${n})  (target >= 95 %)`);
  for (const kind of CLASSES) {
    const of = results.filter((r) => r.call.kind === kind);
    const ok = of.filter((r) => r.verdict === kind).length;
    console.log(`    ${kind.padEnd(9)} ${(100 * ok / of.length).toFixed(1)} % (${ok}/${of.length})${kind === 'human' ? '  (target >= 98 %)' : ''}`);
  }
  console.log(`  confusion (rows: who answered; columns: verdict)\n    ${''.padEnd(10)}${VERDICTS.map((v) => v.padStart(10)).join('')}`);
  for (const kind of CLASSES) {
    console.log(`    ${kind.padEnd(10)}${VERDICTS.map((v) => String(results.filter((r) => r.call.kind === kind && r.verdict === v).length).padStart(10)).join('')}`);
  }
  for (const r of results.filter((x) => x.verdict !== x.call.kind)) console.log(`    wrong: ${r.call.spec.name} -> ${r.verdict} (${JSON.stringify(r.record.detection?.signals?.[0] ?? null)})`);

  const wait = (heard: Heard, call: CorpusCall) => (heard.firstAudioAt ?? NaN) - playedFrom(heard, call.speechStartMs);
  const people = results.filter((r) => r.call.kind === 'human' && r.heard.firstAudioAt !== null);
  const on = people.map((r) => wait(r.heard, r.call));
  const off = baseline.filter((b) => b.heard.firstAudioAt !== null).map((b) => wait(b.heard, b.call));
  const silence = people.map((r) => (r.heard.firstAudioAt ?? NaN) - playedTo(r.heard, r.call.firstSpeechEndMs));
  console.log(`  people: their first speech starts -> the agent's first audio at the phone (${on.length} with detection, ${off.length} without, same run)`);
  console.log(`    with detection     p50 ${ms(pct(on, 0.5))}  p95 ${ms(pct(on, 0.95))}`);
  console.log(`    without (baseline) p50 ${ms(pct(off, 0.5))}  p95 ${ms(pct(off, 0.95))}  (the agent greets at the answer, often over the person)`);
  console.log(`    added p50 ${ms(pct(on, 0.5) - pct(off, 0.5))}  (target <= 300 ms)`);
  console.log(`    the person's silence after their first words, with detection: p50 ${ms(pct(silence, 0.5))}  p95 ${ms(pct(silence, 0.95))}`);

  const withdrawnOnPeople = people.filter((r) => signalAt(r.record, 'greeting_withdrawn') !== null).length;
  console.log(`    people whose greeting was withdrawn: ${withdrawnOnPeople}  (must be 0)`);

  // A message's first packet: the first audio after the far end played what detection asked for it at (the greeting was withdrawn before).
  const messageAt = (r: (typeof results)[number]) => {
    const asked = signalAt(r.record, 'message_started');
    return asked === null ? null : r.heard.audioAt.find((t) => t >= playedTo(r.heard, asked)) ?? null;
  };
  const messages = results.filter((r) => r.call.kind === 'voicemail' && r.verdict === 'voicemail' && messageAt(r) !== null);
  const beeped = messages.filter((r) => r.call.beep);
  const gaps = beeped.map((r) => messageAt(r)! - playedTo(r.heard, r.call.beep!.endMs));
  const overGreeting = messages.filter((r) => !r.call.beep).map((r) => messageAt(r)! - playedTo(r.heard, r.call.soundEndMs));
  // Machines: the deciding frame's send -> the greeting's last packet at the phone (the last audio
  // before the far end played to where the agent next spoke: the message, or the answer to a screener).
  const machines = results.filter((r) => r.call.kind !== 'human' && r.record.detection?.decidedAfterMs !== null && r.heard.firstAudioAt !== null);
  const afterGreeting = machines.map((r) => {
    const spoke = [signalAt(r.record, 'message_started'), signalAt(r.record, 'screening_answered')].filter((v): v is number => v !== null);
    const nextAt = spoke.length ? playedTo(r.heard, Math.min(...spoke)) : Infinity;
    const greetingEnd = r.heard.audioAt.filter((t) => t < nextAt).at(-1) ?? NaN;
    return greetingEnd - playedTo(r.heard, r.record.detection.decidedAfterMs);
  });
  const cut = machines.filter((r) => signalAt(r.record, 'greeting_withdrawn') !== null);
  const withdrawals = afterGreeting.filter((v, i) => Number.isFinite(v) && signalAt(machines[i]!.record, 'greeting_withdrawn') !== null);
  const finished = afterGreeting.filter((v, i) => Number.isFinite(v) && signalAt(machines[i]!.record, 'greeting_withdrawn') === null);
  console.log(`  machines greeted at the answer: ${machines.length}; the greeting withdrawn while it was being said: ${cut.length}; over before the verdict: ${finished.length}`);
  console.log(`    withdrawn: the deciding frame sent -> the greeting's last packet at the phone p50 ${ms(pct(withdrawals, 0.5))}  p95 ${ms(pct(withdrawals, 0.95))}  max ${ms(Math.max(...withdrawals))}`);
  console.log(`    over before the verdict: its last packet came ${ms(-pct(finished, 0.5))} (p50) before the deciding frame was sent; any after it: ${finished.filter((v) => v > 0).length}`);
  console.log(`  voicemail with leave_message: the beep's end -> the message's first packet at the phone (${gaps.length} with a beep)`);
  console.log(`    p50 ${ms(pct(gaps, 0.5))}  p95 ${ms(pct(gaps, 0.95))}  (target p95 <= 400 ms); started before the beep ended: ${gaps.filter((g) => g < 0).length}  (target 0)`);
  for (const [i, r] of beeped.entries()) {
    const at = Math.ceil(r.call.beep!.endMs / 20) - 1;
    console.log(`      ${ms(gaps[i]!).padStart(8)}  the far end's last frames of the beep went out ${r.heard.lateMs.slice(at - 2, at + 1).map((l) => l.toFixed(0)).join('/')} ms late  ${r.call.spec.name}`);
  }
  console.log(`    without a beep (${overGreeting.length}): the greeting's end -> the message p50 ${ms(pct(overGreeting, 0.5))}; started before the greeting ended: ${overGreeting.filter((g) => g < 0).length}  (target 0)`);
  const unsaid = results.filter((r) => r.call.kind === 'voicemail' && r.record.detection?.action !== 'left_message');
  if (unsaid.length) console.log(`    no message left on: ${unsaid.map((r) => `${r.call.spec.name} (${r.record.detection?.action})`).join('; ')}`);
}

/** d, and beep and cadence alone: the detector over every call's frames, here. */
function offline(corpus: CorpusCall[]) {
  let detectorMicros = 0;
  let decodeMicros = 0;
  let audioMs = 0;
  let right = 0;
  for (const call of corpus) {
    const payload = Buffer.from(alawmulaw.mulaw.encode(call.pcm));
    const frames = Math.floor(payload.length / 160);
    // The detector as the media path runs it, frame by frame over the whole call, timed as one block.
    const far = new FarEnd();
    const scaled = new Float32Array(160);
    let verdict: string | null = null;
    let t = process.cpuUsage();
    for (let k = 0; k < frames; k++) {
      const pcm = alawmulaw.mulaw.decode(payload.subarray(k * 160, k * 160 + 160));
      for (let i = 0; i < 160; i++) scaled[i] = pcm[i]! / 32768;
      far.push(scaled);
      if (verdict === null) verdict = judgeAnswer(far, { words: false, detectScreening: false }, 0)?.verdict ?? null;
      else if (verdict === 'voicemail') greetingOver(far);
    }
    t = process.cpuUsage(t);
    detectorMicros += t.user + t.system;
    const decoder = createDecoder({ encoding: 'mulaw', sampleRate: 8000 }, 16000);
    let d = process.cpuUsage();
    for (let k = 0; k < frames; k++) decoder.decode(payload.subarray(k * 160, k * 160 + 160));
    d = process.cpuUsage(d);
    decodeMicros += d.user + d.system;
    audioMs += frames * 20;
    if (verdict === call.kind || (call.kind === 'screening' && verdict === 'voicemail')) right += 1;
  }
  const share = (micros: number) => `${((100 * micros) / 1000 / audioMs).toFixed(3)} % of one core`;
  console.log(`\nvoicemail: the detector on ${corpus.length} calls' frames (${(audioMs / 1000).toFixed(0)} s of audio), in this process`);
  console.log(`  detector (decode, Goertzel bank, speech tracker, verdict) ${share(detectorMicros)} per call  (target <= 2 %)`);
  console.log(`  baseline: decoding and resampling the same frames for the STT ${share(decodeMicros)} per call`);
  console.log(`  beep and cadence alone (no words; screening counted right as voicemail): ${right}/${corpus.length} (${(100 * right / corpus.length).toFixed(1)} %)`);
}

async function main() {
  const dir = await mkdtemp(join(tmpdir(), 'parley-vm-bench-'));
  try {
    const specs = corpusSpecs();
    const corpus: CorpusCall[] = [];
    for (const [i, spec] of specs.entries()) corpus.push(await buildCall(dir, spec, i + 1));
    const humans = corpus.filter((c) => c.kind === 'human').length;
    console.log(`voicemail: corpus of ${corpus.length} calls: ${humans} people, ${corpus.filter((c) => c.kind === 'voicemail').length} voicemail greetings, ${corpus.filter((c) => c.kind === 'screening').length} screening prompts`);
    const only = process.env.VOICEMAIL_BENCH_ONLY ?? 'abcd';
    if (/[abc]/.test(only)) report(await live(corpus));
    if (only.includes('d')) offline(corpus);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
