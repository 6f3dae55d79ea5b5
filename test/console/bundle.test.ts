import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { CONSOLE_CSP, DEFAULT_CONSOLE_ROOT } from '../../src/http/console.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/dialects.ts';

/** The most JavaScript, gzipped, that the first page may load: the shell, sign-in and the overview. */
const FIRST_PAGE_BUDGET = 300_000;

interface ManifestChunk {
  file: string;
  src?: string;
  isEntry?: boolean;
  imports?: string[];
  css?: string[];
}

function manifest(): Record<string, ManifestChunk> {
  const path = join(DEFAULT_CONSOLE_ROOT, '.vite/manifest.json');
  assert.ok(existsSync(path), 'the console is not built: run `npm run build:console` (scripts/test.sh does)');
  return JSON.parse(readFileSync(path, 'utf8')) as Record<string, ManifestChunk>;
}

/** A chunk and everything it imports statically (what the browser loads before it runs). */
function closure(chunks: Record<string, ManifestChunk>, key: string, seen = new Set<string>()): Set<string> {
  if (seen.has(key)) return seen;
  seen.add(key);
  for (const imported of chunks[key]?.imports ?? []) closure(chunks, imported, seen);
  return seen;
}

describe('the built console bundle', () => {
  it('loads at most 300 KB of gzipped JavaScript for the first page; heavy pages are separate chunks', () => {
    const chunks = manifest();
    const overview = Object.keys(chunks).find((k) => chunks[k]?.src === 'src/pages/Overview.tsx');
    assert.ok(overview, 'the overview page is its own chunk');
    const first = new Set([...closure(chunks, 'index.html'), ...closure(chunks, overview)]);
    const files = [...first].map((k) => chunks[k]?.file ?? '').filter((f) => f.endsWith('.js'));
    const gzipped = files.reduce((sum, file) => sum + gzipSync(readFileSync(join(DEFAULT_CONSOLE_ROOT, file))).length, 0);
    assert.ok(gzipped < FIRST_PAGE_BUDGET, `the first page loads ${gzipped} bytes of gzipped JavaScript (budget ${FIRST_PAGE_BUDGET})`);
    for (const lazy of ['src/pages/Tasks.tsx', 'src/pages/AssistantPage.tsx', 'src/pages/StrategyPage.tsx']) {
      const key = Object.keys(chunks).find((k) => chunks[k]?.src === lazy);
      assert.ok(key && !first.has(key), `${lazy} is loaded only when it is opened`);
    }
  });

  it('index.html has no inline script or style, only files of the build', () => {
    const html = readFileSync(join(DEFAULT_CONSOLE_ROOT, 'index.html'), 'utf8');
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'every script has a src');
    assert.doesNotMatch(html, /<style|style=/);
    for (const [, url] of html.matchAll(/(?:src|href)="([^"]+)"/g)) assert.match(url ?? '', /^\/console\//);
  });
});

for (const dialect of DIALECTS) {
  describe(`the service serves the built console (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect);
    });
    after(() => t.close());

    it('index.html for / and deep links, not cached, with the strict CSP; hashed assets cached a year', async () => {
      const root = await t.app.inject('/');
      assert.equal(root.statusCode, 302);
      assert.equal(root.headers.location, '/console/');
      const page = await t.app.inject('/console/assistants/5f0c7d1e-3b2a-4c4d-9e8f-0a1b2c3d4e5f');
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /<div id="root"><\/div>/);
      assert.equal(page.headers['cache-control'], 'no-cache');
      assert.equal(page.headers['content-security-policy'], CONSOLE_CSP);
      const scripts = [...page.body.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1] ?? '');
      assert.ok(scripts.length >= 2);
      for (const url of scripts) {
        const asset = await t.app.inject(url);
        assert.equal(asset.statusCode, 200, url);
        assert.equal(asset.headers['cache-control'], 'public, max-age=31536000, immutable');
        assert.equal(asset.headers['content-security-policy'], CONSOLE_CSP);
      }
      const api = await t.app.inject('/api/v1/me');
      assert.equal(api.statusCode, 401, 'the API is not the console');
      assert.equal(api.headers['content-security-policy'], undefined);
    });
  });
}
