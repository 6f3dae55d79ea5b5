import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';

for (const dialect of DIALECTS) {
  describe(`agent tasks API (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    let agentId: string;
    let url: string;
    before(async () => {
      t = await buildTestApp(dialect);
      a = await createTenant(t);
      agentId = (await t.call('POST', `${a.orgPath}/agents`, { body: { name: 'Caller' } })).json().data.id;
      url = `${a.orgPath}/agents/${agentId}/tasks`;
    });
    after(() => t.close());

    const create = (body: Record<string, unknown>, headers?: Record<string, string>) =>
      t.call('POST', url, { body: { targetNumber: '+4930123456', ...body }, headers });
    const total = async (query = '') => (await t.call('GET', `${url}${query}`)).json().totalElements as number;

    it('execute true schedules, false or absent keeps it PENDING; the number is normalised', async () => {
      const scheduled = await create({ execute: true, targetNumber: '+49 (30) 123-45.67', userValues: { firstName: 'Ada' } });
      assert.equal(scheduled.statusCode, 201, scheduled.body);
      const data = scheduled.json().data;
      assert.equal(data.status, 'SCHEDULED');
      assert.equal(data.targetNumber, '+49301234567');
      assert.match(data.createdAt, /Z$/);
      assert.ok(data.nextAttemptAt, 'a null window is due at once');
      assert.deepEqual([data.attempts, data.maxAttempts, data.lastError, data.conclusionId], [0, 3, null, null]);
      assert.deepEqual(data.userValues, { firstName: 'Ada' });
      assert.equal(scheduled.headers.location, `${url}/${data.id}`);
      assert.equal((await create({ execute: false })).json().data.status, 'PENDING');
      const pending = (await create({})).json().data;
      assert.equal(pending.status, 'PENDING');
      assert.equal(pending.nextAttemptAt, null);
    });

    it('400s name the field: number, window and timezone', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ targetNumber: '030 123456' }, 'targetNumber'],
        [{ targetNumber: '+0301234567' }, 'targetNumber'],
        [{ allowedHoursBegin: 9 }, 'allowedHours'],
        [{ allowedHours: 4 }, 'allowedHoursBegin'],
        [{ allowedHoursBegin: 24, allowedHours: 2 }, 'allowedHoursBegin'],
        [{ allowedHoursBegin: 9, allowedHours: 25 }, 'allowedHours'],
        [{ allowedHoursBegin: 9, allowedHours: 0 }, 'allowedHours'],
        [{ allowedHoursBegin: 9, allowedHours: 8, timezone: 'Mars/Olympus' }, 'timezone'],
        [{ execute: 'yes' }, 'execute'],
        [{ status: 'COMPLETED' }, 'status'],
      ];
      const before = await total();
      for (const [body, path] of cases) {
        const res = await create(body);
        assert.equal(res.statusCode, 400, JSON.stringify(body));
        assert.ok(res.json().error.details.some((d: { path: string }) => d.path === path), `${path}: ${res.body}`);
      }
      assert.equal(await total(), before);
    });

    it('refuses target numbers a dialer should not call, saying why; reads the (0) trunk prefix', async () => {
      const cases: [string, RegExp][] = [
        ['+1 900 555 0100', /premium-rate/],
        ['+44 871 234 5678', /premium-rate/],
        ['+49 180 1234567', /shared-cost/],
        ['+1234567', /not a possible number: wrong length for country code \+1/],
      ];
      const before = await total();
      for (const [targetNumber, why] of cases) {
        const res = await create({ targetNumber });
        assert.equal(res.statusCode, 400, targetNumber);
        const detail = res.json().error.details.find((d: { path: string }) => d.path === 'targetNumber');
        assert.match(detail?.message ?? '', why, res.body);
      }
      assert.equal(await total(), before);
      const uk = await create({ targetNumber: '+44 (0)20 7946 0958' });
      assert.equal(uk.statusCode, 201, uk.body);
      assert.equal(uk.json().data.targetNumber, '+442079460958');
      assert.equal((await t.call('DELETE', uk.headers.location as string)).statusCode, 200);
    });

    it('404 for an unknown agent, an assistant, or an agent of another organization', async () => {
      const assistant = (await t.call('POST', `${a.orgPath}/assistants`, { body: { name: 'Not an agent' } })).json().data.id;
      const other = await createTenant(t, 'Other');
      const foreign = (await t.call('POST', `${other.orgPath}/agents`, { body: { name: 'Theirs' } })).json().data.id;
      for (const id of [assistant, foreign, '00000000-0000-4000-8000-000000000000']) {
        const res = await t.call('POST', `${a.orgPath}/agents/${id}/tasks`, { body: { targetNumber: '+4930123456' } });
        assert.equal(res.statusCode, 404);
      }
    });

    it('execute, cancel and delete follow the state machine; others are 409', async () => {
      const task = (await create({})).json().data;
      const at = `${url}/${task.id}`;
      assert.equal((await t.call('POST', `${at}/execute`)).json().data.status, 'SCHEDULED');
      const again = await t.call('POST', `${at}/execute`);
      assert.equal(again.statusCode, 409);
      assert.equal(again.json().error.code, 'CONFLICT');
      assert.equal((await t.call('POST', `${at}/cancel`)).json().data.status, 'CANCELLED');
      assert.equal((await t.call('POST', `${at}/cancel`)).statusCode, 409);
      const restarted = (await t.call('POST', `${at}/execute`)).json().data;
      assert.deepEqual([restarted.status, restarted.attempts], ['SCHEDULED', 0]);
      assert.equal((await t.call('DELETE', at)).statusCode, 200);
      assert.equal((await t.call('GET', at)).statusCode, 404);
      assert.equal((await t.call('POST', `${at}/cancel`)).statusCode, 404);
    });

    it('lists with the status filter, totals per status and sorting', async () => {
      const s = await createTenant(t, 'Lists');
      const agent = (await t.call('POST', `${s.orgPath}/agents`, { body: { name: 'A' } })).json().data.id;
      const lurl = `${s.orgPath}/agents/${agent}/tasks`;
      const numbers = [0, 1, 2, 3, 4].map((i) => `+4930123${i}00`);
      for (const [i, targetNumber] of numbers.entries()) await t.call('POST', lurl, { body: { targetNumber, execute: i % 2 === 0 } });
      const all = (await t.call('GET', lurl)).json();
      assert.equal(all.totalElements, 5);
      // Oldest first; tasks created in the same millisecond may come in either order.
      assert.deepEqual(all.data.map((x: any) => x.targetNumber).sort(), numbers);
      const createdAt = all.data.map((x: any) => x.createdAt);
      assert.deepEqual(createdAt, [...createdAt].sort(), 'oldest first');
      const scheduled = (await t.call('GET', `${lurl}?status=SCHEDULED&sort=createdAt,desc`)).json();
      assert.equal(scheduled.totalElements, 3);
      assert.deepEqual(scheduled.data.map((x: any) => x.targetNumber).sort(), [numbers[0], numbers[2], numbers[4]]);
      const scheduledAt = scheduled.data.map((x: any) => x.createdAt);
      assert.deepEqual(scheduledAt, [...scheduledAt].sort().reverse(), 'newest first');
      assert.equal((await t.call('GET', `${lurl}?status=PENDING&size=1`)).json().totalPages, 2);
      assert.equal((await t.call('GET', `${lurl}?status=LOST`)).statusCode, 400);
      assert.equal((await t.call('GET', `${lurl}?sort=name`)).statusCode, 400);
    });

    it('batch create is all or nothing, with per-item errors', async () => {
      const before = await total();
      const ok = await t.call('POST', `${url}/batch`, { body: { tasks: [{ targetNumber: '+4930111111', execute: true }, { targetNumber: '+4930222222' }] } });
      assert.equal(ok.statusCode, 201);
      assert.deepEqual(ok.json().data.map((x: any) => x.status), ['SCHEDULED', 'PENDING']);
      const bad = await t.call('POST', `${url}/batch`, {
        body: { tasks: [{ targetNumber: '+4930333333' }, { targetNumber: 'call me' }, { targetNumber: '+4930444444', allowedHoursBegin: 3 }] },
      });
      assert.equal(bad.statusCode, 400);
      assert.deepEqual(bad.json().error.details.map((d: any) => d.path).sort(), ['tasks[1].targetNumber', 'tasks[2].allowedHours']);
      assert.equal(await total(), before + 2, 'the bad batch created nothing');
      const tooMany = await t.call('POST', `${url}/batch`, { body: { tasks: Array.from({ length: 1001 }, () => ({ targetNumber: '+4930123456' })) } });
      assert.equal(tooMany.statusCode, 400);
    });

    it('Idempotency-Key: a repeat creates nothing new and answers the same; another body is a 422', async () => {
      const before = await total();
      const headers = { 'idempotency-key': 'campaign-7-row-1' };
      const first = await create({ targetNumber: '+4930555555' }, headers);
      const second = await create({ targetNumber: '+4930555555' }, headers);
      assert.equal(first.statusCode, 201);
      assert.equal(second.statusCode, 201);
      assert.equal(second.body, first.body);
      assert.equal(second.headers.location, first.headers.location);
      assert.equal(second.headers['idempotent-replayed'], 'true');
      assert.equal(await total(), before + 1);
      const other = await create({ targetNumber: '+4930666666' }, headers);
      assert.equal(other.statusCode, 422);
      assert.equal(other.json().error.code, 'IDEMPOTENCY_KEY_REUSED');
      const batchHeaders = { 'idempotency-key': 'batch-1' };
      const body = { tasks: [{ targetNumber: '+4930777777' }, { targetNumber: '+4930888888' }] };
      const b1 = await t.call('POST', `${url}/batch`, { body, headers: batchHeaders });
      const b2 = await t.call('POST', `${url}/batch`, { body, headers: batchHeaders });
      assert.equal(b2.body, b1.body);
      assert.equal(await total(), before + 3);
      assert.equal((await create({}, { 'idempotency-key': 'x'.repeat(256) })).statusCode, 400);
      // A failed create keeps no key: the corrected request goes through with the same key.
      const failed = await create({ targetNumber: 'nope' }, { 'idempotency-key': 'fix-me' });
      assert.equal(failed.statusCode, 400);
      assert.equal((await create({}, { 'idempotency-key': 'fix-me' })).statusCode, 201);
    });

    it('pause and resume answer the flag; deleting an agent with unfinished tasks is a 409', async () => {
      assert.equal((await t.call('POST', `${url}/pause`)).json().data.paused, true);
      assert.equal((await t.call('POST', `${url}/pause`)).json().data.paused, true);
      assert.deepEqual((await t.call('POST', `${url}/resume`)).json().data, { paused: false, pausedAt: null });
      const agentUrl = `${a.orgPath}/agents/${agentId}`;
      const res = await t.call('DELETE', agentUrl);
      assert.equal(res.statusCode, 409);
      assert.match(res.json().message, /unfinished tasks/);
      const open = (await t.call('GET', `${url}?size=100`)).json().data.filter((x: any) => ['PENDING', 'SCHEDULED'].includes(x.status));
      for (const task of open) assert.equal((await t.call('POST', `${url}/${task.id}/cancel`)).statusCode, 200);
      assert.equal((await t.call('DELETE', agentUrl)).statusCode, 200, 'finished tasks go with the agent');
      assert.equal((await t.call('GET', url)).statusCode, 404);
    });
  });
}
