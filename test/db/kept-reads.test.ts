import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, createApiToken, createTenant, type Tenant, type TestApp } from '../helpers/app.ts';

/** A second connection to the test database, as another process would hold: `?` placeholders. */
async function otherConnection(t: TestApp): Promise<{ run(sql: string, ...args: unknown[]): Promise<void>; close(): Promise<void> }> {
  if (t.database.config.dialect === 'sqlite') {
    const db = new SQLite(t.database.config.filename);
    return {
      run: async (sql, ...args) => {
        const statement = db.prepare(sql);
        void (statement.reader ? statement.all(...args) : statement.run(...args));
      },
      close: async () => void db.close(),
    };
  }
  const client = new pg.Client({ connectionString: t.database.url });
  await client.connect();
  const numbered = (sql: string) => {
    let n = 0;
    return sql.replace(/\?/g, () => `$${++n}`);
  };
  return { run: async (sql, ...args) => void (await client.query(numbered(sql), args)), close: () => client.end() };
}

for (const dialect of DIALECTS) {
  describe(`reads kept while nothing is committed (${dialect})`, () => {
    let t: TestApp;
    let a: Tenant;
    let token: string;
    let other: Awaited<ReturnType<typeof otherConnection>>;
    /** A new assistant of its own for each test, so each can run alone. */
    const created = async () => {
      const res = await t.call('POST', `${a.orgPath}/assistants`, { token, body: { name: 'First', systemPrompt: 'Hi.' } });
      const item = res.headers.location as string;
      return { item, id: item.split('/').pop() as string, get: () => t.call('GET', item, { token }) };
    };

    before(async () => {
      t = await buildTestApp(dialect);
      a = await createTenant(t, 'Kept');
      token = await createApiToken(t, a.vendorId, { role: 'editor', organizationId: a.organizationId });
      other = await otherConnection(t);
    });
    after(async () => {
      await other.close();
      await t.close();
    });

    it('the change mark moves with a commit by this process or another connection, and only then', async () => {
      const mark = t.db.changeMark;
      if (dialect === 'postgres') return assert.equal(mark, undefined, 'PostgreSQL has no mark: its reads run every time');
      assert.ok(mark);
      const { item, id, get } = await created();
      const first = mark();
      assert.equal(mark(), first);
      await get();
      assert.equal(mark(), first, 'a read changed the mark');
      assert.equal((await t.call('PATCH', item, { token, body: { name: 'Second' } })).statusCode, 200);
      const second = mark();
      assert.notEqual(second, first);
      await other.run("UPDATE assistants SET system_prompt = 'Hello.' WHERE id = ?", id);
      assert.notEqual(mark(), second);
    });

    it('the mark moves with every commit, across the WAL restarting after a checkpoint', async () => {
      const mark = t.db.changeMark;
      if (dialect === 'postgres') return;
      assert.ok(mark);
      const { id } = await created();
      let last = mark();
      for (let i = 0; i < 5; i++) {
        await other.run('UPDATE assistants SET system_prompt = ? WHERE id = ?', `Prompt ${i}`, id);
        assert.notEqual(mark(), last, `commit ${i}`);
        last = mark();
      }
      // A checkpoint that empties the WAL: the next commit writes its first frames again.
      await other.run('PRAGMA wal_checkpoint(TRUNCATE)');
      last = mark();
      await other.run("UPDATE assistants SET system_prompt = 'After the restart' WHERE id = ?", id);
      assert.notEqual(mark(), last, 'the first commit after the WAL restarted');
      last = mark();
      await t.db.read(t.db.kysely.selectFrom('assistants').select('id').compile());
      assert.equal(mark(), last, 'a read moved the mark');
    });

    it('GET one assistant shows a row another process changed or deleted, on the very next request', async () => {
      const { id, get } = await created();
      const first = await get();
      const kept = await get();
      assert.equal(kept.headers.etag, first.headers.etag);
      assert.deepEqual(kept.json().data, first.json().data);
      await other.run("UPDATE assistants SET name = 'Changed elsewhere', version = version + 1 WHERE id = ?", id);
      const changed = await get();
      assert.equal(changed.statusCode, 200);
      assert.equal(changed.json().data.name, 'Changed elsewhere');
      assert.notEqual(changed.headers.etag, first.headers.etag);
      await other.run('DELETE FROM assistants WHERE id = ?', id);
      assert.equal((await get()).statusCode, 404);
    });

    it('a token revoked by another process is refused on the very next request', async () => {
      const b = await createTenant(t, 'Revoked elsewhere');
      const reader = await createApiToken(t, b.vendorId, { role: 'viewer', organizationId: b.organizationId });
      const list = () => t.call('GET', `${b.orgPath}/assistants`, { token: reader });
      assert.equal((await list()).statusCode, 200);
      assert.equal((await list()).statusCode, 200);
      // What revoking does (tokens.repository.ts), written by another connection.
      await other.run('UPDATE api_tokens SET revoked_at = ? WHERE organization_id = ?', new Date().toISOString(), b.organizationId);
      await other.run("INSERT INTO counters (key, value) VALUES ('auth_epoch', 1) ON CONFLICT (key) DO UPDATE SET value = counters.value + 1");
      assert.equal((await list()).statusCode, 401);
    });
  });
}
