import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { createServer, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestDatabase, type TestDatabase } from '../helpers/dialects.ts';
import { PARLEY } from '../helpers/cli.ts';
import { freePort, kill } from '../helpers/service-process.ts';

/** Generous: only a broken start takes this long to answer. */
const START_TIMEOUT_MS = 20_000;

/** GET /healthz at the address, false when nothing answers there. */
async function healthy(base: string): Promise<boolean> {
  try {
    const res = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2_000) });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}

describe('parley serve --port --host', () => {
  let database: TestDatabase;
  let child: ChildProcess | undefined;
  before(async () => {
    database = await createTestDatabase('sqlite'); // the flags do not depend on the database
  });
  after(async () => {
    if (child) await kill(child);
    await database.drop();
  });

  // 127.0.0.2 is loopback too (all of 127.0.0.0/8 is), so --host can be told apart from HOST=127.0.0.1.
  it('listen where the flags say, over PORT and HOST', async () => {
    const [flagPort, envPort] = [await freePort(), await freePort()];
    child = spawn(process.execPath, [...PARLEY, 'serve', '--port', String(flagPort), '--host', '127.0.0.2'], {
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: database.url, PORT: String(envPort), HOST: '127.0.0.1', PARLEY_SCHEDULER: 'off', LOG_LEVEL: 'error' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!(await healthy(`http://127.0.0.2:${flagPort}`))) {
      assert.equal(child.exitCode, null, `parley serve exited: ${stderr}`);
      assert.ok(Date.now() < deadline, `nothing answered on --port ${flagPort} within ${START_TIMEOUT_MS / 1000} s: ${stderr}`);
      await sleep(50);
    }
    assert.equal(await healthy(`http://127.0.0.1:${flagPort}`), false, 'HOST is overridden by --host');
    assert.equal(await healthy(`http://127.0.0.1:${envPort}`), false, 'PORT is overridden by --port');
  });
});

/** Runs `parley serve` to its end (it must not start) and gives its exit code and stderr. */
async function serveThatFails(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [...PARLEY, 'serve'], {
    env: { PATH: process.env.PATH ?? '', PARLEY_SCHEDULER: 'off', LOG_LEVEL: 'error', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stderr };
}

describe('parley serve on a taken port', { timeout: 120_000 }, () => {
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase('sqlite'); // the ports do not depend on the database
  });
  after(async () => {
    await database.drop();
  });

  it('PORT held by another process: one line naming it (this test), no stack, exit 1', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = holder.address() as AddressInfo;
      const run = await serveThatFails({ DATABASE_URL: database.url, PORT: String(port), HOST: '127.0.0.1', PARLEY_DIALER: 'none' });
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stderr, new RegExp(`^parley: PORT: port ${port} is taken by pid ${process.pid} \\(.*\\) on 127\\.0\\.0\\.1; stop it, or choose another port with PORT or --port\\n$`));
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it('the SIP port held, PARLEY_DIALER by default: serve runs on, and its readable warning names the holder', async () => {
    const holder = createSocket('udp4');
    await new Promise<void>((resolve) => holder.bind(0, '127.0.0.1', resolve));
    const port = await freePort();
    const child = spawn(process.execPath, [...PARLEY, 'serve'], {
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: database.url, PORT: String(port), PARLEY_SCHEDULER: 'off', PARLEY_SIP_HOST: '127.0.0.1', PARLEY_SIP_PORT: String(holder.address().port), PARLEY_LOG_FORMAT: 'pretty', PARLEY_ADMIN_TOKEN: 'a-test-admin-token-of-enough-length-000' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.setEncoding('utf8').on('data', (c: string) => (output += c));
    child.stderr?.setEncoding('utf8').on('data', (c: string) => (output += c));
    try {
      const sipPort = holder.address().port;
      const warning = new RegExp(`^\\[\\d\\d:\\d\\d:\\d\\d\\.\\d{3}\\] WARN: SIP dialer off: could not bind 127\\.0\\.0\\.1:${sipPort} \\(port ${sipPort} is taken by pid ${process.pid} \\(`, 'm');
      const deadline = Date.now() + START_TIMEOUT_MS;
      while (!(warning.test(output) && (await healthy(`http://127.0.0.1:${port}`)))) {
        assert.equal(child.exitCode, null, `parley serve exited: ${output}`);
        assert.ok(Date.now() < deadline, `no warning naming the holder and no /healthz within ${START_TIMEOUT_MS / 1000} s: ${output}`);
        await sleep(50);
      }
      assert.doesNotMatch(output, /^\{"level"/m, 'readable lines, not JSON');
    } finally {
      await kill(child);
      await new Promise<void>((resolve) => holder.close(resolve));
    }
  });

  it('the SIP port held, with PARLEY_DIALER=sip explicit: one line naming the holder, exit 1', async () => {
    const holder = createSocket('udp4');
    await new Promise<void>((resolve) => holder.bind(0, '127.0.0.1', resolve));
    try {
      const sipPort = holder.address().port;
      const run = await serveThatFails({ DATABASE_URL: database.url, PORT: String(await freePort()), PARLEY_DIALER: 'sip', PARLEY_SIP_HOST: '127.0.0.1', PARLEY_SIP_PORT: String(sipPort) });
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stderr, new RegExp(`^parley: PARLEY_DIALER=sip: the SIP endpoint could not bind 127\\.0\\.0\\.1:${sipPort} \\(port ${sipPort} is taken by pid ${process.pid} \\(.*\\)\\); .*\\n$`));
    } finally {
      await new Promise<void>((resolve) => holder.close(resolve));
    }
  });
});
