import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import SQLite from 'better-sqlite3';
import { DIALECTS, createTestDatabase } from '../helpers/dialects.ts';

const ADMIN = 'crash-test-admin-token-0123456789';
const CREATES = 1000;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function startService(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['bin/parley.js', 'serve'], {
    env: { ...process.env, ...env, PARLEY_ADMIN_TOKEN: ADMIN, PARLEY_SCHEDULER: 'off', PARLEY_RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'error' },
    stdio: 'ignore',
  });
  const base = `http://127.0.0.1:${env.PORT}`;
  for (let i = 0; i < 200; i++) {
    const up = await fetch(`${base}/healthz`).then((r) => r.ok, () => false);
    if (up) return child;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('service did not start');
}

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
      let service = await startService(env);
      try {
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
        if (service.exitCode === null && service.signalCode === null) await new Promise((r) => service.once('exit', r));

        if (dialect === 'sqlite') {
          const file = database.url.slice('sqlite:'.length);
          const sqlite = new SQLite(file);
          assert.equal(sqlite.pragma('integrity_check', { simple: true }), 'ok');
          sqlite.close();
        }

        service = await startService(env);
        const missing: string[] = [];
        for (const location of acknowledged) {
          const res = await fetch(base + location, { headers });
          if (res.status !== 200) missing.push(`${location}: ${res.status}`);
        }
        assert.deepEqual(missing, [], 'acknowledged creates lost');
      } finally {
        service.kill('SIGKILL');
        await database.drop();
      }
    });
  });
}
