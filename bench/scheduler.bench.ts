/**
 * Scheduler throughput and due-task picking, on SQLite or PostgreSQL (PARLEY_BENCH_DIALECT).
 *  - transitions/s: tasks moved SCHEDULED -> IN_PROGRESS -> COMPLETED by one worker with an
 *    instant dialer, with 100,000 tasks scheduled, against a bare baseline of single-row
 *    UPDATE transactions on the same database in the same run;
 *  - claiming the next due task (the runner's one-statement claim) at 1,000 and at 100,000
 *    scheduled rows: p50 and the ratio.
 * Run: npm run bench -- bench/scheduler.bench.ts
 */
import { sql } from 'kysely';
import { ManualClock } from '../src/clock.ts';
import type { Dialect } from '../src/db/database.ts';
import { bumpCounter } from '../src/db/counters.ts';
import { buildTestApp, createTenant, type TestApp } from '../test/helpers/app.ts';
import { TestDialer } from '../test/helpers/test-dialer.ts';
import { taskJobs } from '../src/modules/tasks/tasks.jobs.ts';

const dialect = (process.env.PARLEY_BENCH_DIALECT ?? 'sqlite') as Dialect;
const BIG = 100_000;
const SMALL = 1_000;
const SECONDS = 5;

async function seedTasks(t: TestApp, organizationId: string, agentId: string, count: number, at: string) {
  for (let done = 0; done < count; ) {
    const n = Math.min(1000, count - done);
    const rows = Array.from({ length: n }, () => ({
      id: crypto.randomUUID(), organization_id: organizationId, agent_id: agentId, status: 'SCHEDULED', user_values: '{}',
      target_number: '+4930123456', allowed_hours_begin: null, allowed_hours: null, only_weekdays: 0, timezone: null,
      attempts: 0, max_attempts: 3, next_attempt_at: at, last_error: null, conclusion_id: null, sip_credential_id: null,
      lease_owner: null, lease_expires_at: null, completed_at: null, created_at: at, updated_at: at,
    }));
    await t.db.kysely.transaction().execute(async (trx) => {
      await trx.insertInto('agent_tasks').values(rows).execute();
      await bumpCounter(trx, `agent_tasks:${agentId}`, n);
      await bumpCounter(trx, `agent_tasks:${agentId}:SCHEDULED`, n);
    });
    done += n;
  }
  if (dialect === 'postgres') await sql`analyze agent_tasks`.execute(t.db.kysely);
}

async function pickP50(t: TestApp, clock: ManualClock): Promise<number> {
  const kind = taskJobs(t.ctx, { dialer: new TestDialer(), retry: { baseMs: 60_000, capMs: 3_600_000 }, leaseMs: 60_000, maxVoicemails: 2 });
  const times: number[] = [];
  for (let i = 0; i < 300; i++) {
    const start = process.hrtime.bigint();
    const due = await kind.claim({ owner: 'bench', now: clock.now(), leaseUntil: new Date(clock.now().getTime() + 60_000), limit: 1 });
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (due.length !== 1) throw new Error('nothing due');
  }
  times.sort((a, b) => a - b);
  return times[150] as number;
}

async function setup(count: number) {
  const clock = new ManualClock('2026-11-18T10:00:00Z');
  const t = await buildTestApp(dialect, {}, { clock, dialer: new TestDialer(() => ({ status: 'completed' })) });
  const a = await createTenant(t);
  const agentId = (await t.call('POST', `${a.orgPath}/agents`, { body: { name: 'bench' } })).json().data.id as string;
  await seedTasks(t, a.organizationId, agentId, count, '2026-11-18T09:00:00.000Z');
  return { t, clock, a, agentId };
}

async function main() {
  const small = await setup(SMALL);
  const pickSmall = await pickP50(small.t, small.clock);
  await small.t.close();

  const big = await setup(BIG);
  const pickBig = await pickP50(big.t, big.clock);

  // Bare baseline: one-row update transactions, the least a state change can cost here.
  const { rows } = await sql<{ id: string }>`select id from agent_tasks limit 2000`.execute(big.t.db.kysely);
  let bare = 0;
  let deadline = Date.now() + SECONDS * 1000;
  while (Date.now() < deadline) {
    const id = rows[bare % rows.length]?.id as string;
    await big.t.db.kysely.transaction().execute((trx) => trx.updateTable('agent_tasks').set({ updated_at: new Date().toISOString() }).where('id', '=', id).execute());
    bare++;
  }

  let transitions = 0;
  const before = Date.now();
  deadline = before + SECONDS * 1000;
  while (Date.now() < deadline) {
    const { claimed } = await big.t.app.runner.tick();
    await big.t.app.runner.idle();
    transitions += (claimed.agent_task ?? 0) * 2;
  }
  const elapsed = (Date.now() - before) / 1000;
  const remaining = await sql<{ n: number }>`select count(*) as n from agent_tasks where status = 'SCHEDULED'`.execute(big.t.db.kysely);
  await big.t.close();

  const tps = transitions / elapsed;
  const bareTps = bare / SECONDS;
  console.log(`scheduler benchmark (${dialect}), ${BIG.toLocaleString()} scheduled tasks, one worker, instant dialer`);
  console.log(`  bare one-row update transactions  ${bareTps.toFixed(0)}/s`);
  console.log(`  task state transitions            ${tps.toFixed(0)}/s  (${(tps / bareTps).toFixed(2)} x bare; ${Number(remaining.rows[0]?.n)} still scheduled)`);
  console.log(`  claim next due task p50            ${pickSmall.toFixed(3)} ms @${SMALL.toLocaleString()}  ${pickBig.toFixed(3)} ms @${BIG.toLocaleString()}  ratio ${(pickBig / pickSmall).toFixed(2)} (flat = ~1)`);
}

await main();
