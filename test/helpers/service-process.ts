/** A real `parley serve` child process on loopback, for the tests that SIGKILL one. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { PARLEY } from './cli.ts';

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface ServiceProcess {
  child: ChildProcess;
  base: string;
}

/** How long `parley serve` may take to answer /healthz: generous (it compiles the TypeScript on start, 20 s was too little on a machine at load 15); it only fails a broken start. */
const START_TIMEOUT_MS = 50_000;
/** The end of the child's stderr kept for the error message of a failed start. */
const STDERR_TAIL = 4_000;

/**
 * Starts `parley serve` with the environment given (PORT included) and waits until /healthz
 * answers. A start that fails in any way (the child exits, never answers, cannot be spawned)
 * kills the child and waits for it to be gone before throwing, so no test leaves one behind;
 * and a child still running when this test process exits is killed with it.
 */
export async function startService(env: Record<string, string>, options: { built?: boolean; startTimeoutMs?: number } = {}): Promise<ServiceProcess> {
  const startTimeoutMs = options.startTimeoutMs ?? START_TIMEOUT_MS;
  // built: the compiled dist/cli.js, as `npm start` runs it (benches measure what users run).
  const command = options.built ? ['dist/cli.js'] : PARLEY;
  const child = spawn(process.execPath, [...command, 'serve'], {
    // PARLEY_DIALER defaults to sip: a service binds a SIP port only when the test asks for one.
    env: { ...process.env, PARLEY_SCHEDULER: 'off', PARLEY_RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: process.env.PARLEY_TEST_SERVICE_LOGS ? 'info' : 'error', PARLEY_DIALER: 'none', ...env },
    stdio: ['ignore', process.env.PARLEY_TEST_SERVICE_LOGS ? 'inherit' : 'ignore', 'pipe'],
  });
  const reap = () => child.kill('SIGKILL');
  process.once('exit', reap);
  child.once('exit', () => process.off('exit', reap));
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => { stderr = (stderr + chunk).slice(-STDERR_TAIL); });

  const exited = new Promise<never>((_, reject) => {
    child.once('exit', (code, signal) => reject(new Error(`service exited with ${code ?? signal}`)));
    child.once('error', reject);
  });
  exited.catch(() => undefined); // observed below; a later exit must not be an unhandled rejection
  const base = `http://127.0.0.1:${env.PORT}`;
  const deadline = Date.now() + startTimeoutMs;
  try {
    while (Date.now() < deadline) {
      const healthz = fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(async (r) => {
        await r.body?.cancel();
        return r.ok;
      }, () => false);
      if (await Promise.race([healthz, exited])) return { child, base };
      await sleep(50);
    }
    throw new Error(`service did not answer /healthz within ${startTimeoutMs / 1000} s`);
  } catch (err) {
    await kill(child);
    throw new Error(`${(err as Error).message}${stderr ? `; its stderr ended with:\n${stderr}` : ''}`, { cause: err });
  }
}

/** SIGKILL, and wait until the process is gone (at once when it never started or already ended). */
export async function kill(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await gone;
}
