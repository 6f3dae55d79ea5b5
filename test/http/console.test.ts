import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { CONSOLE_CSP, consolePlugin } from '../../src/http/console.ts';

const INDEX = '<!doctype html><title>Parley</title><script type="module" src="/console/assets/index-AbC123.js"></script>';

describe('the console plugin: cache headers, CSP and deep links', () => {
  let dir: string;
  let app: FastifyInstance;
  let bare: FastifyInstance;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-console-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), INDEX);
    writeFileSync(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    writeFileSync(join(dir, 'assets', 'index-AbC123.js'), 'console.log(1)');
    app = Fastify();
    await app.register(consolePlugin, { root: dir });
    bare = Fastify();
    await bare.register(consolePlugin, { root: join(dir, 'missing') });
  });
  after(async () => {
    await app.close();
    await bare.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('redirects /console to /console/ (GET / is the home redirect of the system routes)', async () => {
    const res = await app.inject('/console');
    assert.equal(res.statusCode, 302);
    assert.equal(res.headers.location, '/console/');
  });

  it('serves hashed assets for a year, immutable, with the CSP', async () => {
    const res = await app.inject('/console/assets/index-AbC123.js');
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, 'console.log(1)');
    assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.match(String(res.headers['content-type']), /javascript/);
    assert.equal(res.headers['content-security-policy'], CONSOLE_CSP);
  });

  it('answers index.html, never cached, for the root and every deep link; a missing asset is a 404', async () => {
    for (const url of ['/console/', '/console/assistants/5f0c7d1e-3b2a-4c4d-9e8f-0a1b2c3d4e5f', '/console/calls?status=ended']) {
      const res = await app.inject(url);
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.body, INDEX);
      assert.equal(res.headers['cache-control'], 'no-cache');
      assert.match(String(res.headers['content-type']), /text\/html/);
      assert.equal(res.headers['content-security-policy'], CONSOLE_CSP);
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
    }
    const favicon = await app.inject('/console/favicon.svg');
    assert.match(String(favicon.headers['content-type']), /svg/);
    assert.equal((await app.inject('/console/assets/missing-XyZ.js')).statusCode, 404);
    assert.equal((await app.inject('/console/../package.json')).body.includes('"name"'), false);
  });

  it('the CSP allows no inline script or style and no framing', () => {
    assert.match(CONSOLE_CSP, /default-src 'self'/);
    assert.match(CONSOLE_CSP, /script-src 'self'(;|$)/);
    assert.match(CONSOLE_CSP, /frame-ancestors 'none'/);
    assert.doesNotMatch(CONSOLE_CSP, /unsafe-inline|unsafe-eval/);
  });

  it('without a build, says how to make one', async () => {
    const res = await bare.inject('/console/assistants');
    assert.equal(res.statusCode, 503);
    assert.match(res.body, /npm run build:console/);
  });
});
