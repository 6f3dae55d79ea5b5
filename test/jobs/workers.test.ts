import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createTenant, type TestApp } from '../helpers/app.ts';

const TASKS = 1200;
const CREDENTIALS = 4;
const MAX_PER_CREDENTIAL = 5;

/** Counts calls as the far end sees them: concurrency per credential, and runs per task. */
function startRecorder() {
  const active = new Map<string, number>();
  const maxActive = new Map<string, number>();
  const runningTasks = new Set<string>();
  const completed = new Map<string, number>();
  const answeredBy = new Map<string, number[]>();
  const byWorker = new Map<number, number>();
  let overlaps = 0;
  let started = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const { taskId, credentialId, worker } = JSON.parse(body) as { taskId: string; credentialId: string; worker: number };
      started++;
      byWorker.set(worker, (byWorker.get(worker) ?? 0) + 1);
      if (runningTasks.has(taskId)) overlaps++;
      runningTasks.add(taskId);
      const now = (active.get(credentialId) ?? 0) + 1;
      active.set(credentialId, now);
      maxActive.set(credentialId, Math.max(maxActive.get(credentialId) ?? 0, now));
      let open = true;
      const hangUp = (answered: boolean) => {
        if (!open) return;
        open = false;
        byWorker.set(worker, (byWorker.get(worker) ?? 1) - 1);
        active.set(credentialId, (active.get(credentialId) ?? 1) - 1);
        runningTasks.delete(taskId);
        if (answered) {
          completed.set(taskId, (completed.get(taskId) ?? 0) + 1);
          answeredBy.set(taskId, [...(answeredBy.get(taskId) ?? []), worker]);
        }
      };
      // The caller's process died mid-call: the call is over.
      res.on('close', () => hangUp(false));
      setTimeout(() => {
        hangUp(true);
        res.end('ok');
      }, 5 + Math.floor(Math.random() * 15));
    });
  });
  return { server, active, maxActive, completed, byWorker, answeredBy, stats: () => ({ overlaps, started }) };
}

function spawnWorker(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/worker-process.ts'], {
    env: { ...process.env, LOG_LEVEL: 'error', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => d.toString().includes('ready') && resolve(child));
    child.once('exit', (code) => reject(new Error(`worker exited early with ${code}`)));
  });
}

for (const dialect of DIALECTS.filter((d) => d === 'postgres')) {
  describe(`three worker processes on ${dialect}`, () => {
    let t: TestApp;
    let recorder: ReturnType<typeof startRecorder>;
    const workers: ChildProcess[] = [];

    before(async () => {
      t = await buildTestApp(dialect);
      recorder = startRecorder();
      await new Promise<void>((resolve) => (recorder.server).listen(0, '127.0.0.1', resolve));
    });
    after(async () => {
      for (const w of workers) w.kill('SIGKILL');
      recorder.server.closeAllConnections();
      await new Promise((resolve) => recorder.server.close(resolve));
      await t.close();
    });

    it(`run ${TASKS} tasks exactly once to completion, never past maxAgentTasks, surviving a SIGKILL`, { timeout: 120_000 }, async () => {
      const a = await createTenant(t);
      for (let c = 0; c < CREDENTIALS; c++) {
        const cred = await t.call('POST', `${a.orgPath}/sip/credentials`, {
          body: { name: `trunk ${c}`, hostname: 'sip.example.com', username: `u${c}`, password: 'pw', maxAgentTasks: MAX_PER_CREDENTIAL },
        });
        const number = await t.call('POST', `${a.orgPath}/sip/numbers`, { body: { name: `n${c}`, number: `+4930200000${c}`, sipCredentialId: cred.json().data.id } });
        const agent = await t.call('POST', `${a.orgPath}/agents`, { body: { name: `agent ${c}`, telephoneNumberId: number.json().data.id } });
        const url = `${a.orgPath}/agents/${agent.json().data.id}/tasks/batch`;
        const tasks = Array.from({ length: TASKS / CREDENTIALS }, (_, i) => ({ targetNumber: `+4930${String(c * 100000 + i).padStart(7, '0')}`, execute: true }));
        assert.equal((await t.call('POST', url, { body: { tasks } })).statusCode, 201);
      }

      const env = {
        DATABASE_URL: t.database.url,
        PARLEY_SECRET_KEY: randomBytes(32).toString('base64'),
        RECORDER_URL: `http://127.0.0.1:${(recorder.server.address() as AddressInfo).port}/call`,
        // Renewed every third of it: 5 s leaves room for a loaded CI machine to be slow without a live worker losing a call.
        PARLEY_LEASE_SECONDS: '5',
        PARLEY_RETRY_BASE_SECONDS: '0.2',
      };
      workers.push(...(await Promise.all([spawnWorker(env), spawnWorker(env), spawnWorker(env)])));

      const counts = async () => {
        const { rows } = await sql<{ status: string; n: number }>`select status, count(*)::int as n from agent_tasks group by status`.execute(t.db.kysely);
        return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)])) as Record<string, number>;
      };
      while (((await counts()).COMPLETED ?? 0) < TASKS / 4) await new Promise((r) => setTimeout(r, 50));
      // Kill a worker while it has calls open, so the test covers work lost mid-call.
      const victim = workers[0] as ChildProcess;
      while (!(recorder.byWorker.get(victim.pid as number) ?? 0)) await new Promise((r) => setImmediate(r));
      victim.kill('SIGKILL');

      const deadline = Date.now() + 100_000;
      let status = await counts();
      while ((status.COMPLETED ?? 0) < TASKS && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        status = await counts();
      }
      assert.deepEqual(status, { COMPLETED: TASKS }, 'every task completed, none lost');
      assert.equal(recorder.completed.size, TASKS, 'every task was answered');
      // A call answered in the instant before the SIGKILL, but not yet recorded, is made again:
      // only the killed worker's last calls may repeat, and only once.
      for (const [taskId, workersAnswering] of recorder.answeredBy) {
        if (workersAnswering.length === 1) continue;
        assert.equal(workersAnswering.length, 2, `${taskId} answered ${workersAnswering.length} times`);
        assert.equal(workersAnswering[0], victim.pid, `${taskId} was repeated although its first call was not the killed worker's`);
      }
      assert.equal(recorder.stats().overlaps, 0, 'no task ran twice at the same time');
      assert.equal(recorder.maxActive.size, CREDENTIALS);
      for (const [credential, max] of recorder.maxActive) assert.ok(max <= MAX_PER_CREDENTIAL, `${credential} reached ${max}`);
      assert.ok([...recorder.maxActive.values()].some((m) => m === MAX_PER_CREDENTIAL), 'the limit was actually reached');
      // The killed worker had calls open: each was either cut or answered without being recorded,
      // and was taken up again by the others once its lease ran out.
      const retried = await sql<{ n: number }>`select count(*)::int as n from agent_tasks where attempts > 1`.execute(t.db.kysely);
      assert.ok(Number(retried.rows[0]?.n) >= 1, 'the killed worker\'s open calls were retried');
    });
  });
}
