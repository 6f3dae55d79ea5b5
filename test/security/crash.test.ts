import type { ChildProcess } from 'node:child_process';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import SQLite from 'better-sqlite3';
import { DIALECTS, createTestDatabase } from '../helpers/dialects.ts';
import { freePort, kill, startService } from '../helpers/service-process.ts';

const ADMIN = 'crash-test-admin-token-0123456789';
const CREATES = 1000;

for (const dialect of DIALECTS) {
  describe(`crash safety (${dialect})`, () => {
    it(`every create acknowledged with 201 survives a SIGKILL during ${CREATES} concurrent creates`, { timeout: 120_000 }, async () => {
      const database = await createTestDatabase(dialect);
      const env = { DATABASE_URL: database.url, PORT: String(await freePort()), PARLEY_SECRET_KEY: randomBytes(32).toString('base64') };
      const base = `http://127.0.0.1:${env.PORT}`;
      const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
      const post = async (path: string, body: unknown) => {
        const res = await fetch(base + path, { method: 'POST', headers, body: JSON.stringify(body) });
        return { status: res.status, body: (await res.json()) as { data: { id: string } }, location: res.headers.get('location') };
      };
      // Every child this test starts is killed in `finally`, whichever step failed (startService
      // itself kills a child that did not come up).
      const started: ChildProcess[] = [];
      const start = async () => {
        const { child } = await startService({ ...env, PARLEY_ADMIN_TOKEN: ADMIN });
        started.push(child);
        return child;
      };
      try {
        const service = await start();
        const vendor = await post('/api/v1/vendors', { name: 'Crash' });
        const org = await post(`/api/v1/vendors/${vendor.body.data.id}/organizations`, { name: 'Crash org' });
        const orgPath = org.location as string;
        const agent = await post(`${orgPath}/agents`, { name: 'Caller' });

        const acknowledged: string[] = [];
        let killed = false;
        let next = 0;
        const worker = async () => {
          while (next < CREATES) {
            const i = next++;
            const request = i % 2 === 0
              ? post(`${orgPath}/assistants`, { name: `assistant ${i}`, systemPrompt: 'x'.repeat(2000) })
              : post(`${orgPath}/agents/${agent.body.data.id}/tasks`, { targetNumber: '+4930123456', userValues: { i } });
            const res = await request.catch(() => null);
            if (res?.status === 201 && res.location) acknowledged.push(res.location);
            if (!killed && acknowledged.length >= 300) {
              killed = true;
              service.kill('SIGKILL');
            }
          }
        };
        await Promise.all(Array.from({ length: 50 }, worker));
        assert.ok(killed, 'the service was killed mid-run');
        assert.ok(acknowledged.length >= 300 && acknowledged.length < CREATES, `${acknowledged.length} acknowledged`);
        await kill(service);

        if (dialect === 'sqlite') {
          const file = database.url.slice('sqlite:'.length);
          const sqlite = new SQLite(file);
          assert.equal(sqlite.pragma('integrity_check', { simple: true }), 'ok');
          sqlite.close();
        }

        await start();
        const missing: string[] = [];
        for (const location of acknowledged) {
          const res = await fetch(base + location, { headers });
          if (res.status !== 200) missing.push(`${location}: ${res.status}`);
        }
        assert.deepEqual(missing, [], 'acknowledged creates lost');
      } finally {
        await Promise.all(started.map(kill));
        await database.drop();
      }
    });
  });
}
