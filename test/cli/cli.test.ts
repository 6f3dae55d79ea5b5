import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { runCli } from '../../src/cli/program.ts';
import { date } from '../../src/cli/arguments.ts';
import { PROVIDER_VARIABLES } from '../../src/calls/providers/registry.ts';
import { CLIENT_SETTINGS, SETTINGS } from '../../src/config.ts';
import { freePort } from '../helpers/service-process.ts';
import { startLlmServer, type LlmServer } from '../calls/support/llm-server.ts';

interface Ran {
  code: number | 'running';
  out: string;
  err: string;
}

/** Runs the CLI in this process with captured streams and the environment given (nothing of process.env). */
async function parley(argv: string[], env: Record<string, string> = {}): Promise<Ran> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await runCli(argv, { stdout, stderr, stdin: new PassThrough(), env });
  return { code, out, err };
}

const tableNames = (markdown: string) => new Set([...markdown.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((m) => m[1]));

describe('parley, the command line', () => {
  it('--version prints the version of package.json; --help lists the commands', async () => {
    const version = await parley(['--version']);
    assert.equal(version.code, 0);
    assert.equal(version.out.trim(), JSON.parse(readFileSync('package.json', 'utf8')).version);
    const help = await parley(['--help']);
    assert.equal(help.code, 0);
    for (const command of ['serve', 'worker', 'migrate', 'doctor', 'setup', 'chat', 'test', 'token', 'environment', 'lab']) assert.match(help.out, new RegExp(`\\n  ${command}\\b`));
  });

  it('every command answers --help', async () => {
    for (const argv of [['serve'], ['worker'], ['migrate'], ['doctor'], ['setup'], ['chat'], ['test'], ['token'], ['token', 'create'], ['environment'], ['lab']]) {
      const help = await parley([...argv, '--help']);
      assert.equal(help.code, 0, argv.join(' '));
      assert.match(help.out, new RegExp(`^Usage: parley ${argv.join(' ')}`), argv.join(' '));
    }
    assert.match((await parley(['chat', '--help'])).out, /PARLEY_URL[\s\S]*PARLEY_TOKEN/);
  });

  it('an unknown command suggests the near one, and exits 2', async () => {
    const ran = await parley(['servee']);
    assert.equal(ran.code, 2);
    assert.match(ran.err, /unknown command 'servee'/);
    assert.match(ran.err, /Did you mean serve\?/);
  });

  it('unknown flags and bad values are errors that say what was expected', async () => {
    const flag = await parley(['serve', '--bogus']);
    assert.equal(flag.code, 2);
    assert.match(flag.err, /unknown option '--bogus'/);
    const portValue = await parley(['serve', '--port', 'eighty']);
    assert.equal(portValue.code, 2);
    assert.match(portValue.err, /Expected a TCP port/);
    const expires = await parley(['token', 'create', '--vendor', '0b6f1c1e-7a55-4f0e-9a34-2f1e4c3b9d10', '--expires-at', '31/01/2027']);
    assert.equal(expires.code, 2);
    assert.match(expires.err, /--expires-at <date>' argument '31\/01\/2027' is invalid\. Expected an ISO 8601 date/);
    const role = await parley(['token', 'create', '--vendor', '0b6f1c1e-7a55-4f0e-9a34-2f1e4c3b9d10', '--role', 'owner']);
    assert.equal(role.code, 2);
    assert.match(role.err, /Allowed choices are viewer, editor, admin/);
  });

  it('dates are parsed to UTC, or refused when they do not exist', () => {
    assert.equal(date('2027-01-31'), '2027-01-31T00:00:00.000Z');
    assert.equal(date('2027-01-31T17:00:00+01:00'), '2027-01-31T16:00:00.000Z');
    assert.throws(() => date('2027-02-30'), /Expected an ISO 8601/);
    assert.throws(() => date('2027-01-31T17:00'), /with a time zone/);
  });

  it('a client command without its token says which variable or flag to set, exit 1', async () => {
    const chat = await parley(['chat', '0b6f1c1e-7a55-4f0e-9a34-2f1e4c3b9d10']);
    assert.equal(chat.code, 1);
    assert.match(chat.err, /set PARLEY_TOKEN or pass --token/);
    const setup = await parley(['setup']);
    assert.equal(setup.code, 1);
    assert.match(setup.err, /set PARLEY_ADMIN_TOKEN or pass --admin-token/);
  });

  it('parley help environment lists every variable of config.ts and the provider registry; docs/configuration.md lists exactly those', async () => {
    const ran = await parley(['help', 'environment']);
    assert.equal(ran.code, 0);
    const names = new Set([...SETTINGS, ...PROVIDER_VARIABLES, ...CLIENT_SETTINGS].map((s) => s.name));
    for (const name of names) assert.match(ran.out, new RegExp(`^  ${name}\\b`, 'm'), name);
    const docs = readFileSync('docs/configuration.md', 'utf8');
    assert.deepEqual(tableNames(docs), names);
    // The provider rows say what the registry says, word for word.
    for (const { name, description } of PROVIDER_VARIABLES) {
      assert.ok(docs.includes(`| \`${name}\` |  | ${description} |`), `docs/configuration.md's row of ${name} is the registry's`);
      assert.ok(ran.out.includes(`  ${name}\n      ${description}`), `help environment's ${name}`);
    }
    const readme = readFileSync('README.md', 'utf8');
    assert.match(readme, /\(docs\/configuration\.md\)/);
    assert.match(readme.slice(0, 1200), /\(docs\/getting-started\.md\)/, 'getting started is linked from the top of the README');
  });
});

describe('parley doctor', () => {
  let llm: LlmServer;
  let dir: string;
  before(async () => {
    llm = await startLlmServer();
    dir = mkdtempSync(join(tmpdir(), 'parley-doctor-'));
  });
  after(async () => {
    await llm.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('one line per check; a migrated database and an answering LLM pass, and no secret is printed', async () => {
    const env = { DATABASE_URL: `sqlite:${join(dir, 'p.db')}`, OPENAI_BASE_URL: llm.baseUrl, OPENAI_API_KEY: 'sk-doctor-secret-1234567890', PARLEY_ADMIN_TOKEN: 'admin-doctor-secret-0123456789abcdef0123' };
    assert.equal((await parley(['migrate'], env)).code, 0);
    const ran = await parley(['doctor'], env);
    assert.equal(ran.code, 0, ran.out);
    const lines = ran.out.trim().split('\n');
    assert.deepEqual(lines.map((l) => l.slice(6).split(/\s{2,}/)[0]), ['config', 'database', 'migrations', 'admin token', 'secret key', 'egress', 'llm', 'stt', 'tts']);
    assert.match(ran.out, /^OK {4}migrations {3}all \d+ applied$/m);
    assert.match(ran.out, /^OK {4}admin token {2}from PARLEY_ADMIN_TOKEN$/m);
    assert.match(ran.out, /^OK {4}llm .*answered GET \/models with 1 model/m);
    assert.doesNotMatch(ran.out, /doctor-secret/);
    assert.equal(llm.modelListHeaders.at(-1)?.authorization, 'Bearer sk-doctor-secret-1234567890');
  });

  it('exits 1 when the LLM endpoint does not answer, naming the cause', async () => {
    const closed = await freePort(); // nothing listens there
    const ran = await parley(['doctor'], { DATABASE_URL: `sqlite:${join(dir, 'q.db')}`, OPENAI_BASE_URL: `http://127.0.0.1:${closed}/v1` });
    assert.equal(ran.code, 1);
    assert.match(ran.out, /^WARN {2}database .*does not exist yet/m);
    assert.match(ran.out, new RegExp(`^FAIL  llm +http://127\\.0\\.0\\.1:${closed}/v1 .*GET /models got no answer \\(.*ECONNREFUSED`, 'm'));
  });

  it('exits 1 on a configuration that does not parse', async () => {
    const ran = await parley(['doctor'], { PORT: 'eighty' });
    assert.equal(ran.code, 1);
    assert.match(ran.out, /^FAIL {2}config/m);
  });
});
