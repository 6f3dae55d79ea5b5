import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { ADMIN_TOKEN, buildTestApp, createTenant, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { freePort, kill, startService, type ServiceProcess } from '../helpers/service-process.ts';
import { until } from '../helpers/until.ts';

/** No LLM configured: the built-in demo model answers, no account needed. */
const NO_LLM = { OPENAI_BASE_URL: '', OPENAI_API_KEY: '' };
const GREETING = 'Hello! How can I help?';
/** Generous: a chat of a few demo answers takes a second or two on a quiet machine. */
const RUN_TIMEOUT_MS = 60_000;

interface Chat {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** The built `parley chat` (bin/parley.js runs dist/) as a process, its stdout and stderr gathered in one transcript. */
function chat(command: string[], env: Record<string, string>): Chat {
  const child = spawn(command[0]!, command.slice(1), { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  // A failed test leaves no chat behind: the test process's exit takes it along.
  const reap = () => child.kill('SIGKILL');
  process.once('exit', reap);
  child.once('close', () => process.off('exit', reap));
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
  child.once('error', (err) => (output += `[test] could not run ${command[0]}: ${err.message}`));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** The chat's exit code; a chat still running after the deadline fails with its transcript. */
function finished(run: Chat): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`chat still running after ${RUN_TIMEOUT_MS / 1000} s:\n${run.output()}`)), RUN_TIMEOUT_MS);
  });
  return Promise.race([run.exited, late]).finally(() => clearTimeout(timer));
}

/** A terminal's transcript without its control sequences (readline's cursor moves and colours) and carriage returns. */
const CONTROL = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]|\r`, 'g');
const plain = (output: string) => output.replace(CONTROL, '');

/** Each text appears in the transcript after the one before it. */
function inOrder(output: string, texts: (string | RegExp)[]): void {
  let from = 0;
  for (const text of texts) {
    const rest = output.slice(from);
    const at = typeof text === 'string' ? rest.indexOf(text) : rest.search(text);
    assert.ok(at >= 0, `${String(text)} after position ${from} in:\n${output}`);
    from += at + 1;
  }
}

for (const dialect of DIALECTS) {
  describe(`parley chat, as a process against a service (${dialect})`, { timeout: 400_000 }, () => {
    let t: TestApp;
    let service: ServiceProcess | undefined;
    let env: Record<string, string>;
    let assistant: string;
    let orgPath: string;
    before(async () => {
      t = await buildTestApp(dialect);
      const port = await freePort();
      service = await startService({ ...NO_LLM, PORT: String(port), DATABASE_URL: t.database.url, PARLEY_ADMIN_TOKEN: ADMIN_TOKEN, PARLEY_SECRET_KEY: t.config.secretKey.toString('base64') }, { built: true });
      const tenant = await createTenant(t);
      orgPath = tenant.orgPath;
      const created = await t.call('POST', `${orgPath}/assistants`, { body: { name: 'Desk', systemPrompt: 'You help.', systemPromptGreeting: GREETING } });
      assert.equal(created.statusCode, 201, created.body);
      assistant = created.json().data.id;
      env = { PARLEY_URL: service.base, PARLEY_TOKEN: ADMIN_TOKEN, PARLEY_VENDOR: tenant.vendorId, PARLEY_ORGANIZATION: tenant.organizationId };
    });
    after(async () => {
      if (service) await kill(service.child);
      await t.close();
    });

    /** The record of the call the chat printed the id of, once the service has stored its end. */
    const record = async (output: string) => {
      const id = /^call id: (\S+)$/m.exec(output)?.[1];
      assert.ok(id, output);
      return until('the call record ended', async () => (await t.call('GET', `${orgPath}/calls/${id}`)).json().data, (call) => call?.status === 'ended', 30_000);
    };

    it('piped lines go after the greeting, one per answer; the end of the input ends the call, exit 0', { timeout: 100_000 }, async () => {
      const run = chat([process.execPath, 'bin/parley.js', 'chat', assistant], env);
      // All of it at once, before the call has even started: the greeting still comes first.
      run.child.stdin!.end('What can you do?\nThank you\n');
      const code = await finished(run);
      const output = run.output();
      assert.equal(code, 0, output);
      inOrder(output, [`assistant: ${GREETING}`, 'you: What can you do?', /assistant: \S/, 'you: Thank you', /assistant: \S/, 'call ended: client_ended', 'call id: ']);
      const call = await record(output);
      assert.equal(call.endReason, 'client_ended');
      assert.deepEqual(call.transcript.map((e: { role: string }) => e.role), ['assistant', 'user', 'assistant', 'user', 'assistant']);
    });

    it('SIGINT (Ctrl-C) with the input piped ends the call as the client\'s, exit 0', { timeout: 100_000 }, async () => {
      const run = chat([process.execPath, 'bin/parley.js', 'chat', assistant], env);
      await until('the greeting', async () => run.output(), (o) => o.includes(`assistant: ${GREETING}`) || run.child.exitCode !== null, RUN_TIMEOUT_MS);
      assert.equal(run.child.exitCode, null, run.output());
      run.child.kill('SIGINT');
      assert.equal(await finished(run), 0, run.output());
      assert.match(run.output(), /call ended: client_ended/);
      const call = await record(run.output());
      assert.equal(call.status, 'ended');
      assert.equal(call.endReason, 'client_ended');
      run.child.stdin!.destroy();
    });

    it('at a terminal the prompt comes after the greeting, and Ctrl-C there hangs up too, exit 0', { timeout: 100_000 }, async () => {
      // script(1) gives the chat a pseudo-terminal: stdin is a TTY, as for a person.
      const line = `${process.execPath} bin/parley.js chat ${assistant}`;
      const run = chat(['script', '-qfec', line, '/dev/null'], env);
      const shown = await until('the prompt', async () => plain(run.output()), (o) => /you: $/.test(o) || run.child.exitCode !== null, RUN_TIMEOUT_MS);
      inOrder(shown, [`assistant: ${GREETING}`, 'you: ']);
      assert.equal(shown.indexOf('you: '), shown.lastIndexOf('you: '), `one prompt, after the greeting:\n${shown}`);
      run.child.stdin!.write('\u0003'); // Ctrl-C, as the terminal sends it in raw mode
      assert.equal(await finished(run), 0, run.output());
      assert.match(run.output(), /call ended: client_ended/);
      assert.equal((await record(plain(run.output()))).endReason, 'client_ended');
    });
  });
}
