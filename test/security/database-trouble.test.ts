/**
 * Issue 10, item 13: a database that is down, frozen, locked by another process or out of
 * disk gives a quick 503 with Retry-After (never a 500, never a hang), /readyz answers within a
 * second either way, and a full disk is called a full disk in the log and in /readyz.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { ManualClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { READY_TIMEOUT_MS } from '../../src/http/system.routes.ts';
import { DIALECTS, createTestDatabase } from '../helpers/dialects.ts';
import { ADMIN_TOKEN, buildTestApp, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';
import { startTcpProxy, waitFor, type TcpProxy } from './support.ts';

/** How long /readyz may take, with room for a loaded machine; without the fix it hung for 30 s. */
const READY_WITHIN_MS = READY_TIMEOUT_MS + 2_000;

async function timed<T>(work: Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const result = await work;
  return [result, performance.now() - started];
}

function assertUnavailable(res: { statusCode: number; headers: Record<string, unknown>; json(): any }, message: RegExp): void {
  assert.equal(res.statusCode, 503, JSON.stringify(res.json()));
  assert.equal(res.json().error.code, 'UNAVAILABLE');
  assert.match(res.json().message, message);
  assert.ok(Number(res.headers['retry-after']) > 0, 'Retry-After');
}

if (DIALECTS.includes('postgres')) {
  describe('PostgreSQL down, then frozen, behind a proxy (postgres)', () => {
    let t: TestApp;
    let a: Tenant;
    let proxy: TcpProxy;
    before(async () => {
      const database = await createTestDatabase('postgres');
      const direct = new URL(database.url);
      proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port) });
      const proxied = new URL(database.url);
      proxied.port = String(proxy.port);
      const config = loadConfig(
        { PARLEY_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'info' },
        { database: { dialect: 'postgres', connectionString: proxied.toString() }, secretKey: randomBytes(32) },
      );
      // The service waits 5 s for a connection and 15 s (+2) for a statement; a test needs no such patience.
      t = await buildTestApp('postgres', {}, { reuse: { database, config }, logLevel: 'info', pgTimeouts: { connectMs: 1_000, statementMs: 1_000, idleInTransactionMs: 5_000 } });
      a = await createTenant(t);
    });
    after(async () => {
      await proxy.set('open');
      await t.close();
      await proxy.close();
    });

    it('down: every request is a 503 with Retry-After, /readyz too, and service resumes when it is back', async () => {
      await proxy.set('down');
      assertUnavailable(await t.call('GET', a.orgPath), /database is unavailable/);
      assertUnavailable(await t.call('POST', `${a.orgPath}/assistants`, { body: { name: 'Lost' } }), /database is unavailable/);
      const [ready, took] = await timed(t.call('GET', '/readyz', { token: null }));
      assertUnavailable(ready, /unreachable/);
      assert.ok(took < READY_WITHIN_MS, `/readyz took ${took.toFixed(0)} ms`);
      assert.doesNotMatch(t.logs(), /"msg":"unhandled error"/);

      await proxy.set('open');
      await waitFor('the service to reach the database again', async () => (await t.call('GET', a.orgPath)).statusCode === 200);
      assert.equal((await t.call('GET', '/readyz', { token: null })).statusCode, 200);
    });

    it('frozen: /readyz answers 503 within a second, requests a 503 once the statement timeout passes', async () => {
      assert.equal((await t.call('GET', a.orgPath)).statusCode, 200);
      await proxy.set('frozen');
      const [ready, took] = await timed(t.call('GET', '/readyz', { token: null }));
      assertUnavailable(ready, /unreachable/);
      assert.ok(took < READY_WITHIN_MS, `/readyz took ${took.toFixed(0)} ms`);
      assertUnavailable(await t.call('GET', a.orgPath), /database is unavailable/);
      assertUnavailable(await t.call('POST', `${a.orgPath}/assistants`, { body: { name: 'Held' } }), /database is unavailable/);

      await proxy.set('open');
      await waitFor('the service to reach the database again', async () => (await t.call('GET', a.orgPath)).statusCode === 200);
    });
  });
}

if (DIALECTS.includes('sqlite')) {
  describe('SQLite out of disk, and locked by another process (sqlite)', () => {
    let t: TestApp;
    let a: Tenant;
    const clock = new ManualClock('2026-11-18T10:00:00Z');
    before(async () => {
      t = await buildTestApp('sqlite', {}, { clock, logLevel: 'info' });
      a = await createTenant(t);
    });
    after(() => t.close());
    const pragma = async (text: string) => (await sql.raw(`pragma ${text}`).execute(t.db.kysely)).rows[0];

    it('disk full: a 503 that says so, the log says so (not "cannot rollback"), /readyz says so', async () => {
      const { page_count: pages } = (await pragma('page_count')) as { page_count: number };
      // The database may not grow: as if the disk were full.
      await pragma(`max_page_count = ${pages}`);
      const big = { name: 'Big', systemPrompt: 'p'.repeat(90_000) };
      assertUnavailable(await t.call('POST', `${a.orgPath}/assistants`, { body: big }), /disk full/);
      assert.match(t.logs(), /database write failed: the disk is full/);
      assert.doesNotMatch(t.logs(), /cannot rollback/);
      const [ready, took] = await timed(t.call('GET', '/readyz', { token: null }));
      assertUnavailable(ready, /the disk is full/);
      assert.ok(took < READY_WITHIN_MS);
      assert.equal((await t.call('GET', a.orgPath)).statusCode, 200, 'reads go on');

      await pragma('max_page_count = 1073741823');
      assert.equal((await t.call('POST', `${a.orgPath}/assistants`, { body: big })).statusCode, 201);
      clock.advance(61_000); // the last failed write is a minute old
      assert.equal((await t.call('GET', '/readyz', { token: null })).statusCode, 200);
    });

    it('locked by another process: a write waits its busy timeout (5 s), then 503 with Retry-After; /readyz stays ready', async () => {
      const filename = (t.config.database as { filename: string }).filename;
      const other = new SQLite(filename);
      other.pragma('busy_timeout = 0');
      other.exec('begin immediate');
      try {
        assertUnavailable(await t.call('POST', `${a.orgPath}/assistants`, { body: { name: 'Waits' } }), /database is unavailable/);
        // Reading needs no lock (WAL); authenticated reads may still wait, to take a rate-limit chunk.
        assert.equal((await t.call('GET', '/readyz', { token: null })).statusCode, 200);
      } finally {
        other.exec('rollback');
        other.close();
      }
      assert.equal((await t.call('POST', `${a.orgPath}/assistants`, { body: { name: 'Goes' } })).statusCode, 201);
    });
  });
}
