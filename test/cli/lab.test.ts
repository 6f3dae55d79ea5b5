// `parley lab` as a user runs it: the real command against a real `parley serve` on loopback, its
// Kamailio and baresip from Debian's packages. A task of an agent with the lab's number rings the
// lab's phone, the phone is answered and hung up by typing into the lab, and the call record is
// the task's. Then the lab is killed outright and run again, as after a crash. The service hears
// the phone through a fake Deepgram (a voice call without speech to text is refused at start).
// RTP: the service takes 27100-27149, the lab's phone 27150-27199.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIALECTS, createTestDatabase, type TestDatabase } from '../helpers/dialects.ts';
import { PARLEY } from '../helpers/cli.ts';
import { freeUdpPort } from '../helpers/kamailio.ts';
import { stopLabLeftovers } from '../helpers/lab.ts';
import { freePort, kill, startService, type ServiceProcess } from '../helpers/service-process.ts';
import { until } from '../helpers/until.ts';
import { startFakeDeepgram, type FakeDeepgram } from '../voice/fakes/deepgram.ts';

const PHONE = '+12125550100';
const NUMBER = '+12125550199';
const DG_KEY = 'dg-test-key-0123456789';

interface Lab {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
  exited: Promise<number | null>;
}

function startLab(env: Record<string, string>, dir: string, sipPort: number): Lab {
  const child = spawn(process.execPath, [...PARLEY, 'lab', '--dir', dir, '--rtp-ports', '27150-27199', '--sip-port', String(sipPort)], {
    env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

for (const dialect of DIALECTS) {
  describe(`parley lab (${dialect})`, () => {
    let database: TestDatabase;
    let stt: FakeDeepgram;
    let service: ServiceProcess;
    let dir: string;
    let env: Record<string, string>;
    const labs: Lab[] = [];

    async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
      const res = await fetch(`${service.base}/api/v1/vendors/${env.PARLEY_VENDOR}/organizations/${env.PARLEY_ORGANIZATION}${path}`, {
        method, headers: { authorization: `Bearer ${env.PARLEY_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    }

    before(async () => {
      database = await createTestDatabase(dialect);
      stt = await startFakeDeepgram({ apiKey: DG_KEY });
      dir = await mkdtemp(join(tmpdir(), 'parley-lab-test-'));
      const adminToken = randomBytes(32).toString('hex');
      const port = String(await freePort());
      service = await startService({
        PORT: port, DATABASE_URL: database.url, PARLEY_ADMIN_TOKEN: adminToken, PARLEY_EGRESS_ALLOW: '127.0.0.0/8',
        PARLEY_SCHEDULER: 'on', PARLEY_DIALER: 'sip', PARLEY_SIP_PORT: '0', PARLEY_RTP_PORTS: '27100-27149',
        PARLEY_RECORDINGS_DIR: join(dir, 'recordings'), DEEPGRAM_API_KEY: DG_KEY, DEEPGRAM_BASE_URL: stt.url,
        ...(dialect === 'postgres' ? { PARLEY_SECRET_KEY: randomBytes(32).toString('base64') } : {}),
      });
      // The organization and its token as a newcomer makes them: parley setup's export lines.
      const setup = spawn(process.execPath, [...PARLEY, 'setup', '--vendor-name', 'Lab', '--organization-name', 'Phones'], {
        env: { PATH: process.env.PATH ?? '', PARLEY_URL: service.base, PARLEY_ADMIN_TOKEN: adminToken }, stdio: ['ignore', 'pipe', 'ignore'],
      });
      let exports = '';
      setup.stdout.on('data', (c: Buffer) => (exports += c.toString()));
      assert.equal(await new Promise((resolve) => setup.once('exit', resolve)), 0);
      env = Object.fromEntries([...exports.matchAll(/^export (\w+)='([^']*)'$/gm)].map((m) => [m[1] as string, m[2] as string]));
      assert.ok(env.PARLEY_TOKEN && env.PARLEY_ORGANIZATION, exports);
    }, { timeout: 120_000 });
    after(async () => {
      for (const lab of labs) await kill(lab.child);
      stopLabLeftovers(join(dir, 'lab'));
      if (service) await kill(service.child);
      await stt?.close();
      await database?.drop();
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    }, { timeout: 60_000 });

    it('rings its phone on a task call, answers and hangs up from the terminal, dials the agent\'s number, and a run after a crash takes over', { timeout: 150_000 }, async () => {
      const labDir = join(dir, 'lab');
      const sipPort = await freeUdpPort();
      const lab = startLab(env, labDir, sipPort);
      labs.push(lab);
      await until('the lab to be up', lab.output, (o) => o.includes('Parley lab is up') || lab.child.exitCode !== null, 60_000);
      const up = lab.output();
      // The port asked for, or (when something took it for TCP meanwhile) another, saying why.
      const trunk = /^ {2}trunk {3}Kamailio on 127\.0\.0\.1:(\d+), UDP and TCP(.*)$/m.exec(up);
      assert.ok(trunk && (trunk[1] === String(sipPort) ? trunk[2] === '' : trunk[2]?.includes(`${sipPort} is taken`)), up);
      assert.match(up, new RegExp(`phone {3}baresip on 127\\.0\\.0\\.1:\\d+, registered at the trunk as \\${PHONE}`), up);
      const numberId = new RegExp(`the number \\${NUMBER} \\(([0-9a-f-]{36}), created\\)`).exec(up)?.[1];
      assert.ok(numberId, up);
      // What it printed is what the API holds: the registering credentials and the number on them.
      const creds = (await api('GET', '/sip/credentials')).body.data;
      assert.deepEqual(creds.map((c: any) => [c.name, c.hostname, c.register]), [['parley lab', '127.0.0.1', true]]);
      const number = (await api('GET', `/sip/numbers/${numberId}`)).body.data;
      assert.deepEqual([number.number, number.sipCredentialId], [NUMBER, creds[0].id]);

      // The commands it printed, as the API's requests.
      const agent = await api('POST', '/agents', { name: 'Lab caller', systemPromptGreeting: 'Hello from Parley! This is a test call.', telephoneNumberId: numberId });
      assert.equal(agent.status, 201, JSON.stringify(agent.body));
      const task = await api('POST', `/agents/${agent.body.data.id}/tasks`, { targetNumber: PHONE });
      assert.equal(task.status, 201, JSON.stringify(task.body));
      const run = await api('POST', `/agents/${agent.body.data.id}/tasks/${task.body.data.id}/execute`, {});
      assert.equal(run.status, 200, JSON.stringify(run.body));

      await until('the phone to ring', lab.output, (o) => o.includes(`phone: ringing, a call from sip:${NUMBER}@`), 40_000);
      lab.child.stdin.write('a\n');
      await until('the call to be answered', lab.output, (o) => o.includes('phone: in a call with'), 20_000);
      const calls = async () => (await api('GET', `/calls?agentId=${agent.body.data.id}`)).body.data as any[];
      const live = await until('the call record', calls, (c) => c.length === 1, 20_000);
      assert.deepEqual([live[0].taskId, live[0].transport], [task.body.data.id, { type: 'sip', calledNumber: PHONE, callingNumber: NUMBER }]);
      // The agent greets (the demo model, eSpeak NG) before the phone hangs up.
      await until('the greeting to be said', calls, (c) => c[0]?.status === 'ended' || c[0]?.transcript?.some((e: any) => e.role === 'assistant' && e.endMs !== undefined), 30_000);
      lab.child.stdin.write('h\n');
      await until('the call to end at the phone', lab.output, (o) => o.includes('phone: call ended'), 20_000);
      // The media figures are kept once RTP has closed, just after the record says ended.
      const [ended] = await until('the call record to end with its media figures', calls, (c) => c[0]?.status === 'ended' && c[0]?.media != null, 30_000);
      assert.equal(ended.failure, null, JSON.stringify(ended));
      assert.equal(ended.endReason, 'client_ended', JSON.stringify(ended));
      assert.ok(ended.media.packetsSent > 25, JSON.stringify(ended.media));

      // The phone dials the lab's number: the trunk delivers it to Parley's registration, and the number's agent answers.
      await until('Parley registered at the trunk', async () => (await api('GET', `/sip/credentials/${creds[0].id}`)).body.data.registration?.state, (s) => s === 'registered', 30_000);
      lab.child.stdin.write(`d ${NUMBER}\n`);
      const inbound = await until('the inbound call record', calls, (c) => c.some((call) => call.transport.calledNumber === NUMBER), 30_000);
      assert.deepEqual(inbound.find((call) => call.transport.calledNumber === NUMBER).transport, { type: 'sip', calledNumber: NUMBER, callingNumber: PHONE });
      await until('the phone to be in the call it placed', lab.output, (o) => o.split('phone: in a call with').length === 3, 20_000);
      lab.child.stdin.write('h\n');
      await until('the inbound call to end', calls, (c) => c.every((call) => call.status === 'ended'), 30_000);

      // A crash (kill -9) leaves Kamailio and baresip running; the next run stops them and reuses what it created.
      lab.child.kill('SIGKILL');
      await lab.exited;
      // This time the port asked for is taken: the lab says so and takes a free one.
      const taken = dgram.createSocket('udp4');
      await new Promise<void>((resolve) => taken.bind(0, '127.0.0.1', resolve));
      const takenPort = taken.address().port;
      const again = startLab(env, labDir, takenPort);
      labs.push(again);
      try {
        await until('the second lab to be up', again.output, (o) => o.includes('Parley lab is up') || again.child.exitCode !== null, 60_000);
      } finally {
        taken.close();
      }
      assert.match(again.output(), new RegExp(`^ {2}trunk {3}Kamailio on 127\\.0\\.0\\.1:\\d+, UDP and TCP \\(${takenPort} is taken, so a free port was picked\\)$`, 'm'), again.output());
      assert.match(again.output(), /^Stopped what a lab run before left running: kamailio \(pid \d+\), baresip \(pid \d+\)\.$/m, again.output());
      assert.match(again.output(), new RegExp(`the number \\${NUMBER} \\(${numberId}, updated\\)`), again.output());
      assert.equal((await api('GET', '/sip/credentials')).body.data.length, 1, 'the credentials of the run before were updated, not doubled');

      // Ctrl-C: both stopped, the folder removed; the number stays while the agent uses it, and the lab says so.
      again.child.kill('SIGINT');
      assert.equal(await again.exited, 0, again.output());
      assert.match(again.output(), /Left in the organization \(the next parley lab reuses them\):\n {2}the number \([0-9a-f-]{36}\): The agent "Lab caller" uses this number/, again.output());
      assert.equal(existsSync(labDir), false, 'the lab folder is removed');
    });
  });
}
