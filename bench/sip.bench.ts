/**
 * The SIP dialer, measured (issue 14). `parley serve` runs in its own process with
 * PARLEY_DIALER=sip and places agent tasks' calls; the providers are the fakes of the tests.
 *  a. Time from the phone's 200 OK to the first greeting RTP packet at the phone, minus the fake
 *     TTS's own time to first audio (printed beside it, the baseline), p50 over sequential calls.
 *     The phone is a bare UDP UAS in this process that only timestamps. Target p50 < 50 ms.
 *  b. 100 concurrent calls to a sipp UAS (its own process) that answers and echoes the RTP, so
 *     every call's greeting comes back as speech and keeps the pipeline busy: how late the
 *     service's 20 ms RTP frames go out after their place on their talkspurt's grid (p50/p99/max
 *     from /metrics, measured where they are sent: the media thread) and its RSS, beside the same
 *     service with one call, in the same run. Also printed: how late the main thread handed the
 *     frames over; a hand-over later than the lead is a gap on the wire, and counts there.
 *     Targets: p99 within 5 ms, RSS < 600 MB.
 *  d. Recording's cost: the load of (b), every call recorded (the agent's recording.enabled) and
 *     not, in the same run, each for SIP_BENCH_RECORD_SECONDS (120): the service's CPU time per
 *     call and second, its frame lateness on the wire (p99), the hand-over to the media thread and its
 *     RSS (SIP_BENCH_RECORDED_FIRST=1 runs the recorded load first). Targets: CPU +10 % at
 *     most, p99 unchanged within 1 ms, RSS +50 MB at most for 100 recorded two-minute calls.
 *  c. Call setup rate against Kamailio: N tasks due at once, Kamailio (digest on the INVITE)
 *     routing to the echoing sipp, time until every call was answered; beside it sipp placing
 *     the same number of calls through the same Kamailio to the same UAS (the baseline).
 *     Both phones retransmit their 200 OK until the ACK, as RFC 3261 asks of every UAS.
 * Run: npm run bench -- bench/sip.bench.ts   (SIP_BENCH_CALLS=20 for a quick look)
 */
import dgram from 'node:dgram';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SIP_AUDIO_LEAD } from '../src/calls/transports/sip.ts';
import { parseMessage, serializeMessage } from '../src/sip/message.ts';
import { startLlmServer } from '../test/calls/support/llm-server.ts';
import { ADMIN_TOKEN } from '../test/helpers/app.ts';
import { createTestDatabase } from '../test/helpers/dialects.ts';
import { freeUdpPort, startKamailio, type Kamailio } from '../test/helpers/kamailio.ts';
import { reply, request } from '../test/helpers/raw-sip-peer.ts';
import { freePort, kill, startService } from '../test/helpers/service-process.ts';
import { startSipp, type Sipp } from '../test/helpers/sipp.ts';
import { until } from '../test/helpers/until.ts';
import { startFakeDeepgram } from '../test/voice/fakes/deepgram.ts';
import { startElevenLabsFake } from '../test/voice/fakes/elevenlabs.ts';

const XI = 'xi-bench-key-0123456789';
const DG = 'dg-bench-key-0123456789';
const CALLS = Number(process.env.SIP_BENCH_CALLS ?? 100);
const LATENCY_CALLS = Number(process.env.SIP_BENCH_LATENCY_CALLS ?? 15);
const LOAD_SECONDS = Number(process.env.SIP_BENCH_SECONDS ?? 20);
const RECORD_SECONDS = Number(process.env.SIP_BENCH_RECORD_SECONDS ?? 120);
const GREETING = 'Hello, this is Parley calling about your order.';
const PHONE = '+12125550777';
/** The baseline's phone: another registration, so Kamailio does not fork to the first one. */
const PHONE_BASELINE = '+12125550778';
/** sipp's socket buffers (its default is 64 KiB): a burst of calls must not overflow the phones' own sockets. */
const SIPP_BUFFER = 4 * 1024 * 1024;

const pct = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil(p * values.length) - 1)] ?? NaN;
const metric = (text: string, name: string, labels = '') => Number(text.split('\n').find((l) => l.startsWith(`${name}${labels} `))?.split(' ')[1] ?? NaN);

/** The service with the dialer on, the fake providers, a tenant and a voice strategy. */
async function world(options: { recording?: boolean } = {}) {
  const tts = await startElevenLabsFake({ apiKey: XI, voiceId: 'Rachel', modelId: 'eleven_flash_v2_5', outputFormat: 'pcm_8000' });
  tts.chunkIntervalMs = 0;
  const stt = await startFakeDeepgram({ apiKey: DG, model: 'nova-3', language: 'en', idleTimeoutMs: 600_000 });
  stt.setTranscript('Tell me more.');
  const llm = await startLlmServer();
  llm.respond = () => ({ text: 'It arrives tomorrow.' });
  const database = await createTestDatabase('sqlite');
  const recordings = mkdtempSync(join(tmpdir(), 'parley-bench-recordings-'));
  const service = await startService({
    PARLEY_RECORDINGS_DIR: recordings,
    PORT: String(await freePort()), DATABASE_URL: database.url, PARLEY_ADMIN_TOKEN: ADMIN_TOKEN, PARLEY_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
    PARLEY_EGRESS_ALLOW: '127.0.0.0/8', PARLEY_SCHEDULER: 'on', PARLEY_MAX_CALLS_PER_ORGANIZATION: String(CALLS * 2 + 10),
    PARLEY_DIALER: 'sip', PARLEY_SIP_PORT: String(await freeUdpPort()), PARLEY_RTP_PORTS: '24000-24799', PARLEY_RING_SECONDS: '20', PARLEY_RETRY_BASE_SECONDS: '3600',
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
    parameters: { model: 'bench', outputSampleRate: 8000, voice: { provider: 'elevenlabs', voiceId: 'Rachel' }, vad: { stopDuration: 0.5 }, transcriber: { provider: 'deepgram', model: 'nova-3', language: 'en' } },
  })).id;
  let agents = 0;
  /** An agent calling through `trunk`; answers its id. */
  const agent = async (trunk: { hostname: string; port: number; username: string; password: string }) => {
    agents += 1;
    const cred = (await api('POST', `${org}/sip/credentials`, { name: `trunk ${agents}`, maxAgentTasks: CALLS + 10, ...trunk })).id;
    const number = (await api('POST', `${org}/sip/numbers`, { number: `+1212555010${agents}`, sipCredentialId: cred })).id;
    return (await api('POST', `${org}/agents`, {
      name: `Agent ${agents}`, llmAudioContentGenerationStrategyId: strategy, telephoneNumberId: number, systemPromptGreeting: GREETING,
      recording: { enabled: options.recording === true },
    })).id as string;
  };
  const tasks = async (agentId: string, n: number): Promise<string[]> => {
    const created = await api('POST', `${org}/agents/${agentId}/tasks/batch`, { tasks: Array.from({ length: n }, () => ({ targetNumber: PHONE, execute: true })) });
    return (created as { id: string }[]).map((t) => t.id);
  };
  const activeCalls = async (agentId: string): Promise<number> => {
    const res = await fetch(`${service.base}${org}/calls?agentId=${agentId}&status=active&size=1`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    return ((await res.json()) as { totalElements: number }).totalElements;
  };
  const cancel = (agentId: string, ids: string[]) => Promise.all(ids.map((id) => api('POST', `${org}/agents/${agentId}/tasks/${id}/cancel`).catch(() => undefined)));
  /** The recordings being made: their spool files and sealed bytes so far (proof that they are). */
  const spooled = () => {
    const dir = join(recordings, 'spool');
    const files = existsSync(dir) ? readdirSync(dir).map((f) => statSync(join(dir, f)).size) : [];
    return { files: files.length, mb: files.reduce((a, b) => a + b, 0) / 1e6 };
  };
  return {
    tts, service, agent, tasks, activeCalls, cancel, spooled,
    async close() {
      await kill(service.child);
      await database.drop();
      rmSync(recordings, { recursive: true, force: true });
      await Promise.all([tts.close(), stt.close(), llm.close()]);
    },
  };
}
type World = Awaited<ReturnType<typeof world>>;

/** (a) A bare UAS that answers at once and notes when its 200 left and when the first RTP packet came. */
async function latency(w: World) {
  const sip = dgram.createSocket('udp4');
  const rtp = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => sip.bind(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => rtp.bind(24900, '127.0.0.1', resolve));
  let answeredAt = 0;
  let firstRtpAt = 0;
  rtp.on('message', () => {
    if (answeredAt && !firstRtpAt) firstRtpAt = performance.now();
  });
  sip.on('message', (buf, from) => {
    const msg = parseMessage(buf);
    if (msg.kind !== 'request') return;
    if (msg.method === 'INVITE') {
      const sdp = `v=0\r\no=phone 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 24900 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n`;
      sip.send(serializeMessage(reply(msg, 200, 'OK', { toTag: 'bench', headers: { Contact: `<sip:phone@127.0.0.1:${sip.address().port}>` }, body: sdp })), from.port, from.address);
      answeredAt ||= performance.now();
    } else if (msg.method === 'BYE') {
      sip.send(serializeMessage(reply(msg, 200, 'OK')), from.port, from.address);
    }
  });
  const agentId = await w.agent({ hostname: '127.0.0.1', port: sip.address().port, username: 'bench', password: 'secret' });
  const setup: number[] = [];
  const added: number[] = [];
  const ttsFirst: number[] = [];
  // One call more than counted: the first one warms the service up (JIT, provider connections).
  for (let i = -1; i < LATENCY_CALLS; i++) {
    answeredAt = 0;
    firstRtpAt = 0;
    const before = w.tts.sent.length;
    const [taskId] = await w.tasks(agentId, 1);
    await until('the greeting at the phone', () => firstRtpAt > 0 && w.tts.sent.length > before, (heard) => heard, 20_000, 20);
    const greeting = w.tts.sent[before]!;
    if (i >= 0) {
      setup.push(firstRtpAt - answeredAt);
      ttsFirst.push(greeting.firstAudioDelayMs);
      added.push(firstRtpAt - answeredAt - greeting.firstAudioDelayMs);
    }
    await w.cancel(agentId, [taskId!]);
    await until('active calls', () => w.activeCalls(agentId), (n) => n === 0, 20_000, 20);
  }
  sip.close();
  rtp.close();
  return { setup, added, ttsFirst };
}

/** A sipp UAS answering every call and echoing its RTP, registered at Kamailio as the phone when one is given. */
async function echoPhone(calls: number, k?: Kamailio, number = PHONE): Promise<Sipp> {
  const sipp = await startSipp({ scenario: 'uas-echo.xml', calls, timeoutSeconds: 600, args: ['-rtp_echo', '-mp', '24910', '-max_socket', '2000', '-buff_size', String(SIPP_BUFFER)] });
  if (k) {
    const reg = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => reg.bind(0, '127.0.0.1', resolve));
    const answered = new Promise<void>((resolve) => reg.once('message', () => resolve()));
    reg.send(serializeMessage(request('REGISTER', `sip:127.0.0.1:${k.udpPort}`, reg.address().port, {
      From: `<sip:${number}@127.0.0.1:${k.udpPort}>;tag=reg`, To: `<sip:${number}@127.0.0.1:${k.udpPort}>`, 'Call-ID': `bench-reg-${Date.now()}`,
      CSeq: '1 REGISTER', Contact: `<sip:${number}@127.0.0.1:${sipp.port}>`, Expires: '3600',
    })), k.udpPort, '127.0.0.1');
    await answered;
    reg.close();
  }
  return sipp;
}

/** CPU time (user and system) a process has used so far, ms (Linux clock ticks are 10 ms). */
const cpuMs = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};

/** (b, d) `calls` concurrent calls for `seconds`: frame lateness, RSS and CPU of the service. */
async function load(calls: number, options: { recording?: boolean; seconds?: number } = {}) {
  const seconds = options.seconds ?? LOAD_SECONDS;
  const w = await world(options);
  const sipp = await echoPhone(calls);
  try {
    const agentId = await w.agent({ hostname: '127.0.0.1', port: sipp.port, username: 'bench', password: 'secret' });
    const ids = await w.tasks(agentId, calls);
    await until(`${calls} calls up`, () => w.activeCalls(agentId), (n) => n >= calls, 120_000, 20);
    const pid = w.service.child.pid!;
    const cpuBefore = cpuMs(pid);
    await sleep(seconds * 1000);
    const cpuPerCallSecond = (cpuMs(pid) - cpuBefore) / calls / seconds;
    const metrics = await (await fetch(`${w.service.base}/metrics`)).text();
    const status = readFileSync(`/proc/${w.service.child.pid}/status`, 'utf8');
    const spooled = w.spooled();
    await w.cancel(agentId, ids);
    return {
      frames: metric(metrics, 'parley_rtp_frames_sent'),
      p50: metric(metrics, 'parley_rtp_frame_lateness_ms', '{quantile="0.5"}'),
      p99: metric(metrics, 'parley_rtp_frame_lateness_ms', '{quantile="0.99"}'),
      max: metric(metrics, 'parley_rtp_frame_lateness_ms', '{quantile="1"}'),
      lateHandovers: metric(metrics, 'parley_rtp_late_handovers'),
      handover: {
        p50: metric(metrics, 'parley_voice_frame_lateness_ms', '{quantile="0.5"}'),
        p99: metric(metrics, 'parley_voice_frame_lateness_ms', '{quantile="0.99"}'),
        max: metric(metrics, 'parley_voice_frame_lateness_ms', '{quantile="1"}'),
      },
      rssMb: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]) / 1024,
      hwmMb: Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]) / 1024,
      cpuPerCallSecond,
      spooled,
    };
  } finally {
    await sipp.stop();
    await w.close();
  }
}

/** (c) `calls` tasks due at once through Kamailio: seconds until all were answered; and sipp doing the same. */
async function setupRate(calls: number) {
  const k = await startKamailio({ template: 'proxy', authFrom: '^[+]121255501' });
  const w = await world();
  try {
    const phone = await echoPhone(calls, k);
    const agentId = await w.agent({ hostname: '127.0.0.1', port: k.udpPort, username: k.username, password: k.password });
    const started = performance.now();
    const ids = await w.tasks(agentId, calls);
    await until(`${calls} calls answered`, () => w.activeCalls(agentId), (n) => n >= calls, 120_000, 20);
    const parleySeconds = (performance.now() - started) / 1000;
    await w.cancel(agentId, ids);
    await phone.stop();

    // The baseline: sipp's own UAC, all calls at once, through the same Kamailio to a fresh echoing UAS.
    const target = await echoPhone(calls, k, PHONE_BASELINE);
    const t0 = performance.now();
    const uac = await startSipp({ scenario: 'uac-basic.xml', calls, remote: `127.0.0.1:${k.udpPort}`, service: PHONE_BASELINE, timeoutSeconds: 120, args: ['-r', '1000', '-l', String(calls), '-buff_size', String(SIPP_BUFFER)] });
    const done = await uac.done;
    const sippSeconds = (performance.now() - t0) / 1000;
    await uac.stop();
    await target.stop();
    return { parleySeconds, sippSeconds, sippOk: done.code === 0, sippLog: done.log };
  } finally {
    await w.close();
    await k.stop();
  }
}

async function main() {
  const only = process.env.SIP_BENCH_ONLY ?? 'abcd';
  if (only.includes('a')) await partA();
  if (only.includes('b')) await partB();
  if (only.includes('c')) await partC();
  if (only.includes('d')) await partD();
}

async function partA() {
  const w = await world();
  const a = await latency(w).finally(() => w.close());
  console.log(`sip: 200 OK at the phone -> first greeting RTP packet, ${a.setup.length} sequential calls, service in its own process`);
  console.log(`  end to end          p50 ${pct(a.setup, 0.5).toFixed(1)} ms  p95 ${pct(a.setup, 0.95).toFixed(1)} ms`);
  console.log(`  fake TTS first audio p50 ${pct(a.ttsFirst, 0.5).toFixed(1)} ms (the baseline: the provider's own share)`);
  console.log(`  added by Parley     p50 ${pct(a.added, 0.5).toFixed(1)} ms  p95 ${pct(a.added, 0.95).toFixed(1)} ms  (target p50 < 50 ms)`);

}

async function partB() {
  const one = await load(1);
  const many = await load(CALLS);
  console.log(`sip: concurrent calls to a sipp UAS echoing the RTP, ${LOAD_SECONDS} s, service in its own process`);
  for (const [label, r] of [['1 call (baseline)', one], [`${CALLS} calls`, many]] as const) {
    console.log(`  ${label.padEnd(18)} frames ${r.frames}  lateness on the wire p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms  max ${r.max.toFixed(1)} ms  RSS ${r.rssMb.toFixed(0)} MB (peak ${r.hwmMb.toFixed(0)} MB)`);
    console.log(`  ${''.padEnd(18)} hand-over to the media thread (lead ${SIP_AUDIO_LEAD * 20} ms) p50 ${r.handover.p50.toFixed(1)} ms  p99 ${r.handover.p99.toFixed(1)} ms  max ${r.handover.max.toFixed(1)} ms; frames handed over after their time ${r.lateHandovers}`);
  }
  console.log(`  p99 lateness ${CALLS} calls - 1 call: ${(many.p99 - one.p99).toFixed(1)} ms  (target within 5 ms, RSS < 600 MB)`);

}

async function partD() {
  // The second run meets a machine the first warmed up (or others loaded meanwhile): run the
  // recorded one first too (SIP_BENCH_RECORDED_FIRST=1) to see how much of a difference is order.
  const recordedFirst = process.env.SIP_BENCH_RECORDED_FIRST === '1';
  const first = await load(CALLS, { recording: recordedFirst, seconds: RECORD_SECONDS });
  const second = await load(CALLS, { recording: !recordedFirst, seconds: RECORD_SECONDS });
  const [plain, recorded] = recordedFirst ? [second, first] : [first, second];
  console.log(`sip: ${CALLS} concurrent calls for ${RECORD_SECONDS} s, every call recorded and not (the baseline), ${recordedFirst ? 'recorded' : 'not recorded'} first, service in its own process`);
  for (const [label, r] of [['not recorded', plain], ['recorded', recorded]] as const) {
    console.log(`  ${label.padEnd(14)} CPU ${r.cpuPerCallSecond.toFixed(2)} ms per call-second  lateness on the wire p99 ${r.p99.toFixed(1)} ms  max ${r.max.toFixed(1)} ms  RSS ${r.rssMb.toFixed(0)} MB (peak ${r.hwmMb.toFixed(0)} MB)`);
    // Recording runs on the main thread: its cost shows first in the hand-over, which reaches the wire only past the lead.
    console.log(`  ${''.padEnd(14)} hand-over to the media thread p99 ${r.handover.p99.toFixed(1)} ms  max ${r.handover.max.toFixed(1)} ms; frames handed over after their time ${r.lateHandovers}; recordings being written ${r.spooled.files} (${r.spooled.mb.toFixed(1)} MB sealed)`);
  }
  console.log(`  recorded / not: CPU x${(recorded.cpuPerCallSecond / plain.cpuPerCallSecond).toFixed(3)} (target <= 1.10)  p99 ${(recorded.p99 - plain.p99).toFixed(1)} ms (target within 1 ms)  RSS ${(recorded.rssMb - plain.rssMb).toFixed(0)} MB (target <= 50 MB)`);
}

async function partC() {
  const c = await setupRate(CALLS);
  console.log(`sip: ${CALLS} task calls due at once, placed through Kamailio (digest on each INVITE) to a sipp UAS`);
  console.log(`  Parley's dialer     ${c.parleySeconds.toFixed(1)} s, ${(CALLS / c.parleySeconds).toFixed(1)} calls/s (from the tasks' creation to every call answered and recorded)`);
  console.log(`  sipp UAC (baseline) ${c.sippSeconds.toFixed(1)} s, ${(CALLS / c.sippSeconds).toFixed(1)} calls/s (whole calls, each held 0.1 s, ${c.sippOk ? 'all completed' : 'some FAILED'})`);
  if (!c.sippOk) console.log(c.sippLog.slice(-3000));
}

await main();
