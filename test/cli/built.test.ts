import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

describe('the built service (npm start runs dist/, not the TypeScript sources)', () => {
  it('bin/parley.js runs the compiled CLI: it migrates a fresh database', () => {
    assert.ok(existsSync('dist/cli.js'), 'dist/ is built (scripts/test.sh runs npm run build first)');
    const dir = mkdtempSync(join(tmpdir(), 'parley-built-'));
    try {
      const run = spawnSync(process.execPath, ['bin/parley.js', 'migrate'], {
        env: { PATH: process.env.PATH, DATABASE_URL: `sqlite:${join(dir, 'p.db')}` },
        encoding: 'utf8',
      });
      assert.equal(run.status, 0, run.stderr);
      assert.match(run.stdout, /applied: 001_tenancy, .*008_runner/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
