// transfer_call on a dialer call, through Kamailio as the trunk: a REFER it relays to the phone
// (which calls the target itself), and the fallback when it refuses the REFER (501): we call
// the target through the same credentials and relay RTP between the two legs, both ways, until
// one of them hangs up. The phones are baresip; a key press on the phone starts the LLM's turn.
// SQLite only: the database plays no part in what these tests are about.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readWav, segmentedCorrelation, speechWav, writeWav } from '../helpers/audio.ts';
import { startBaresip, type Baresip } from '../helpers/baresip.ts';
import { startKamailio, type Kamailio } from '../helpers/kamailio.ts';
import { settledTask, startWorld, type World } from '../calls/support/world.ts';
import { startFakeDeepgram, type FakeDeepgram } from '../voice/fakes/deepgram.ts';

const DG_KEY = 'dg-test-key-0123456789';
/** JSON columns: text on SQLite, parsed on PostgreSQL. */
const json = (v: unknown): any => (typeof v === 'string' ? JSON.parse(v) : v);
const pause = (s: number) => new Int16Array(8000 * s);

describe('transfer_call on a dialer call (sqlite)', () => {
  let dir: string;
  let w: World;
  let k: Kamailio;
  let stt: FakeDeepgram;
  let credentialId: string;
  let strategyId: string;
  const phones: Baresip[] = [];

  async function phone(user: string, pcm: Int16Array, rtpPorts: string): Promise<Baresip> {
    const source = join(dir, `${user}.wav`);
    await writeWav(source, pcm);
    const p = await startBaresip({ user, registrar: { host: '127.0.0.1', port: k.udpPort }, source, rtpPorts });
    phones.push(p);
    return p;
  }

  /** An agent whose transfer_call goes to `destination`, a task calling `target`; the key press 1 makes the LLM transfer. */
  async function transferCall(target: string, destination: string, agentNumber: string): Promise<{ agentId: string; taskId: string }> {
    const number = await w.api('POST', `${w.tenant.orgPath}/sip/numbers`, { number: agentNumber, sipCredentialId: credentialId });
    assert.equal(number.status, 201, JSON.stringify(number.body));
    const agentId = await w.createAssistant({
      name: `Agent ${agentNumber}`, telephoneNumberId: number.body.data.id, llmAudioContentGenerationStrategyId: strategyId,
      extensions: [{ type: 'transfer_call', parameters: { destination } }],
    }, 'agents');
    w.llm.respond = (body) => (body.messages.at(-1)?.content === 'the caller pressed 1'
      ? { toolCalls: [{ id: 'call_t', name: 'transfer_call', arguments: '{}' }] }
      : { text: 'One moment.' });
    const created = await w.api('POST', `${w.tenant.orgPath}/agents/${agentId}/tasks`, { targetNumber: target, execute: true });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return { agentId, taskId: created.body.data.id };
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parley-transfer-'));
    // The trunk refuses REFERs to tel: URIs, and relays the others.
    k = await startKamailio({ template: 'proxy', authFrom: '^[+]1212555002', refuseReferTo: 'tel:' });
    stt = await startFakeDeepgram({ apiKey: DG_KEY, model: 'nova-3', language: 'en' });
    w = await startWorld('sqlite', {
      DEEPGRAM_API_KEY: DG_KEY, DEEPGRAM_BASE_URL: stt.url,
      PARLEY_DIALER: 'sip', PARLEY_SIP_PORT: '0', PARLEY_RTP_PORTS: '23000-23039', PARLEY_RING_SECONDS: '10',
    });
    // No voice named: the local eSpeak voice speaks (no TTS account needed); the STT is the fake.
    const strategy = await w.api('POST', `${w.tenant.orgPath}/llm-generation-strategies`, {
      name: 'Phone voice', type: 'text_to_speech',
      parameters: { model: 'test-model', outputSampleRate: 8000, voice: {}, transcriber: { provider: 'deepgram', model: 'nova-3', language: 'en' } },
    });
    assert.equal(strategy.status, 201, JSON.stringify(strategy.body));
    strategyId = strategy.body.data.id;
    const cred = await w.api('POST', `${w.tenant.orgPath}/sip/credentials`, { name: 'trunk', hostname: '127.0.0.1', port: k.udpPort, username: k.username, password: k.password, maxAgentTasks: 2 });
    assert.equal(cred.status, 201, JSON.stringify(cred.body));
    credentialId = cred.body.data.id;
  });
  after(async () => {
    await Promise.all(phones.map((p) => p.stop()));
    await w?.close();
    await k?.stop();
    await stt?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('sends a REFER that Kamailio relays: the phone calls the target, the call ends transferred', { timeout: 60_000 }, async () => {
    const caller = await phone('+12125550121', pause(30), '23040-23079');
    const target = await phone('+12125550198', pause(30), '23080-23119');
    const { agentId, taskId } = await transferCall('+12125550121', `sip:+12125550198@127.0.0.1:${k.udpPort}`, '+12125550022');
    await w.t.app.runner.tick();
    await caller.waitEvent('CALL_ESTABLISHED', () => true, 20_000);
    assert.ok((await caller.command('sndcode', '1')).ok);
    // The REFER reached the phone through Kamailio, and the phone called the target.
    await caller.waitEvent('TRANSFER', () => true, 20_000);
    const incoming = await target.waitEvent('CALL_ESTABLISHED', () => true, 20_000);
    assert.match(String(incoming.peeruri), /\+12125550121@/, 'the target was called by the transferred phone');

    const done = await settledTask(w, agentId, taskId, 40_000);
    assert.equal(done.status, 'COMPLETED', JSON.stringify(done));
    const call = await w.t.ctx.db.kysely.selectFrom('calls').selectAll().where('task_id', '=', taskId).executeTakeFirstOrThrow();
    assert.equal(call.end_reason, 'transferred');
  });

  it('falls back when the trunk refuses REFER: calls the target itself and bridges the legs both ways until one hangs up', { timeout: 60_000 }, async () => {
    const a = await speechWav(dir, 'caller-speech', 'The caller speaks to the target after the transfer.');
    const b = await speechWav(dir, 'target-speech', 'Hello, you have reached the target of the transfer.');
    // The caller speaks once the bridge is up and hangs up when its file ends; the target speaks
    // as it answers, then stays on the line until our BYE.
    const caller = await phone('+12125550131', Int16Array.from([...pause(7), ...a.pcm, ...pause(2)]), '23120-23159');
    const target = await phone('+12125550199', Int16Array.from([...pause(1), ...b.pcm, ...pause(25)]), '23160-23199');
    const { agentId, taskId } = await transferCall('+12125550131', '+12125550199', '+12125550023');
    await w.t.app.runner.tick();
    await caller.waitEvent('CALL_ESTABLISHED', () => true, 20_000);
    assert.ok((await caller.command('sndcode', '1')).ok);
    const incoming = await target.waitEvent('CALL_ESTABLISHED', () => true, 20_000);
    assert.match(String(incoming.peeruri), /\+12125550023@/, 'the target was called by us, from the agent\'s number');
    assert.equal(caller.events.filter((e) => e.type === 'TRANSFER').length, 0, 'Kamailio did not relay the REFER');

    // The caller hangs up: our BYE ends the target's leg.
    await caller.waitEvent('CALL_CLOSED', () => true, 30_000);
    await target.waitEvent('CALL_CLOSED', () => true, 10_000);
    const done = await settledTask(w, agentId, taskId, 40_000);
    assert.equal(done.status, 'COMPLETED', JSON.stringify(done));
    const call = await w.t.ctx.db.kysely.selectFrom('calls').selectAll().where('task_id', '=', taskId).executeTakeFirstOrThrow();
    assert.equal(call.end_reason, 'transferred');
    const media = json(call.media);
    assert.ok(media.packetsReceived > 300 && media.packetsSent > 300, `the caller's leg carried the bridged audio: ${JSON.stringify(media)}`);

    // Each phone heard the other's speech, relayed unchanged (same codec on both legs).
    const heardByCaller = (await readWav((await caller.recordings()).heard)).pcm;
    const heardByTarget = (await readWav((await target.recordings()).heard)).pcm;
    const toCaller = segmentedCorrelation(b.pcm, heardByCaller);
    const toTarget = segmentedCorrelation(a.pcm, heardByTarget);
    assert.ok(toCaller >= 0.9, `the target's speech at the caller: correlation ${toCaller.toFixed(3)}`);
    assert.ok(toTarget >= 0.9, `the caller's speech at the target: correlation ${toTarget.toFixed(3)}`);
  });
});
