import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { migrations } from '../../src/db/migrations/index.ts';
import { DIALECTS, createTestDatabase } from '../helpers/dialects.ts';
import { PARLEY } from '../helpers/cli.ts';

function runMigrate(url: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...PARLEY, 'migrate'], {
      env: { ...process.env, DATABASE_URL: url, PARLEY_SECRET_KEY: randomBytes(32).toString('base64') },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('close', (code) => resolve({ code, out }));
  });
}

for (const dialect of DIALECTS) {
  describe(`migrations (${dialect})`, () => {
    it('two processes migrating one fresh database at once apply each migration exactly once', async () => {
      const database = await createTestDatabase(dialect);
      try {
        const results = await Promise.all([runMigrate(database.url), runMigrate(database.url), runMigrate(database.url)]);
        for (const r of results) assert.equal(r.code, 0, r.out);
        const appliers = results.filter((r) => r.out.includes('applied:'));
        assert.equal(appliers.length, 1, results.map((r) => r.out).join('\n'));
        const db = openDatabase(database.config);
        const { rows } = await sql<{ name: string }>`select name from parley_migrations`.execute(db.kysely);
        assert.deepEqual(rows.map((r) => r.name).sort(), migrations.map((m) => m.name).sort());
        assert.deepEqual(await migrate(db), [], 'nothing left to apply');
        await db.close();
      } finally {
        await database.drop();
      }
    });
  });
}
