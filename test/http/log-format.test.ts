import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import pino from 'pino';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { logDestination, loggerOptions } from '../../src/logging.ts';

const SECRET = 'sk-secret-value-1234';

/** The lines a logger writes to a file opened as the output `isTTY` says, read back. */
function written(format: 'auto' | 'json' | 'pretty', isTTY: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'parley-log-'));
  const path = join(dir, 'out.log');
  const fd = openSync(path, 'w');
  try {
    const log = pino(loggerOptions('info'), logDestination(format, { fd, isTTY }) ?? pino.destination({ dest: fd, sync: true }));
    log.info({ check: 'database', token: SECRET, req: { method: 'GET', url: `/calls/ws?token=${SECRET}`, headers: { authorization: `Bearer ${SECRET}` } } }, 'database: sqlite');
    log.warn({ body: { apiKey: SECRET } }, 'careful');
    return readFileSync(path, 'utf8');
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('PARLEY_LOG_FORMAT', { timeout: 30_000 }, () => {
  it('auto: JSON lines when the output is not a terminal, readable ones on a terminal', () => {
    assert.equal(logDestination('auto', { fd: 1, isTTY: false }), null);
    assert.equal(logDestination('json', { fd: 1, isTTY: true }), null);
    const json = written('auto', false).trim().split('\n').map((line) => JSON.parse(line));
    assert.deepEqual(json.map((l) => l.msg), ['database: sqlite', 'careful']);
    const terminal = written('auto', true);
    assert.ok(terminal.includes('\u001b['), 'colours on a terminal');
    assert.match(terminal, /INFO.*database: sqlite/);
  });

  it('pretty: one readable line per entry, the time, level and message, secrets redacted as in JSON', () => {
    const out = written('pretty', false);
    const lines = out.trim().split('\n');
    assert.equal(lines.length, 2, out);
    assert.match(lines[0]!, /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: database: sqlite /);
    assert.match(lines[1]!, /^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: careful /);
    assert.ok(!out.includes('\u001b['), 'no colours into a file');
    assert.doesNotMatch(out, /"check"/, 'the start-up tag is for scripts reading JSON');
    assert.ok(!out.includes(SECRET), out);
    assert.ok(!written('auto', true).includes(SECRET));
    assert.ok(!written('json', false).includes(SECRET));
    assert.match(out, /\[Redacted\]/);
  });

  it('a value other than auto, json or pretty is refused naming them', () => {
    assert.equal(loadConfig({ PARLEY_LOG_FORMAT: 'pretty' }).logFormat, 'pretty');
    assert.equal(loadConfig({}).logFormat, 'auto');
    assert.throws(() => loadConfig({ PARLEY_LOG_FORMAT: 'xml' }), (err: Error) => err instanceof ConfigError && /PARLEY_LOG_FORMAT must be one of auto, json, pretty, got "xml"/.test(err.message));
  });
});
