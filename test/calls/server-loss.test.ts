import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { ADMIN_TOKEN, buildTestApp, createTenant } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { freePort, kill, startService, type ServiceProcess } from '../helpers/service-process.ts';
import { EGRESS_ENV, WHSEC, startReceiver } from '../events/support.ts';
import { connect } from './support/client.ts';
import { startLlmServer } from './support/llm-server.ts';

const LEASE = { PARLEY_CALL_LEASE_SECONDS: '1' };

for (const dialect of DIALECTS) {
  describe(`calls of a process that dies (${dialect})`, () => {
    it('a SIGKILLed process\'s ringing and active calls end as server_lost within the lease, with hooks, and the assistant can be deleted', { timeout: 120_000 }, async () => {
      const t = await buildTestApp(dialect, { ...EGRESS_ENV, ...LEASE });
      const llm = await startLlmServer();
      const receiver = await startReceiver();
      const port = await freePort();
      let service: ServiceProcess | undefined;
      try {
        service = await startService({
          ...EGRESS_ENV, ...LEASE, PORT: String(port), DATABASE_URL: t.database.url, PARLEY_ADMIN_TOKEN: ADMIN_TOKEN,
          PARLEY_SECRET_KEY: t.config.secretKey.toString('base64'), OPENAI_BASE_URL: llm.baseUrl, OPENAI_API_KEY: 'test',
        });
        const { base, child } = service;
        const a = await createTenant(t);
        const hooks = ['call_ended', 'transcript_ready'].map((type) => ({ type, parameters: { url: `${receiver.url}/${type}`, secret: WHSEC } }));
        const created = await t.call('POST', `${a.orgPath}/assistants`, { body: { name: 'Desk', systemPromptGreeting: 'Hello!', callEventHooks: hooks } });
        assert.equal(created.statusCode, 201, created.body);
        const assistant = created.headers.location as string;
        // Two calls held by the other process: one never connected (ringing), one in progress (active).
        const start = async () => {
          const res = await fetch(`${base}${assistant}/calls`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: '{}' });
          assert.equal(res.status, 201);
          return ((await res.json()) as { data: { id: string; websocketUrl: string } }).data;
        };
        const ringing = await start();
        const active = await start();
        const client = await connect(active.websocketUrl);
        await client.next('call_started');
        client.send({ type: 'user_message', text: 'Is anyone there?' });
        await client.next('assistant_message');
        // The turn is appended to the record once it is answered.
        const entries = () => t.db.kysely.selectFrom('call_entries').select('seq').where('call_id', '=', active.id).execute();
        while ((await entries()).length < 3) await sleep(20);

        await kill(child);
        assert.equal((await t.call('DELETE', assistant)).statusCode, 409, 'its calls still look live');

        // This process's runner sweeps: within the lease (1 s) plus a sweep, both calls end.
        const call = async (id: string) => (await t.call('GET', `${a.orgPath}/calls/${id}`)).json().data;
        const deadline = Date.now() + 20_000;
        while (Date.now() < deadline) {
          await t.app.runner.tick();
          await t.app.runner.idle();
          if ((await call(ringing.id)).status === 'ended' && (await call(active.id)).status === 'ended' && receiver.received.length >= 2) break;
          await sleep(100);
        }
        const [r, c] = [await call(ringing.id), await call(active.id)];
        assert.deepEqual([r.status, r.endReason, r.conclusion.outcome], ['ended', 'server_lost', 'abandoned']);
        assert.deepEqual([c.status, c.endReason, c.conclusion.outcome], ['ended', 'server_lost', 'failed']);
        assert.equal(c.failure.source, 'server');
        assert.deepEqual(c.transcript.map((e: { role: string; text: string }) => [e.role, e.text]), [
          ['assistant', 'Hello!'], ['user', 'Is anyone there?'], ['assistant', 'Hello there.'],
        ]);
        // Hooks for the call that had started; none for the one that never did.
        const bodies = receiver.received.map((x) => JSON.parse(x.body) as { type: string; data: { callId: string; reason?: string; transcript?: unknown[] } });
        assert.deepEqual(bodies.map((b) => [b.type, b.data.callId]).sort(), [['call_ended', active.id], ['transcript_ready', active.id]]);
        assert.equal(bodies.find((b) => b.type === 'call_ended')?.data.reason, 'server_lost');
        assert.equal(bodies.find((b) => b.type === 'transcript_ready')?.data.transcript?.length, 3);
        assert.equal((await t.call('DELETE', assistant)).statusCode, 200, 'nothing live blocks the delete any more');
        client.close();
      } finally {
        // Whatever failed, the start included: a server left open would keep this file's process alive.
        if (service) await kill(service.child);
        await receiver.close();
        await llm.close();
        await t.close();
      }
    });
  });
}
