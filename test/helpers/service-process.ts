/** A real `parley serve` child process on loopback, for the tests that SIGKILL one. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
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

/** Starts `parley serve` with the environment given (PORT included) and waits until /healthz answers. */
export async function startService(env: Record<string, string>): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [...PARLEY, 'serve'], {
    env: { ...process.env, PARLEY_SCHEDULER: 'off', PARLEY_RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'error', ...env },
    stdio: 'ignore',
  });
  const base = `http://127.0.0.1:${env.PORT}`;
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`service exited with ${code}`))));
  for (let i = 0; i < 400; i++) {
    const up = await Promise.race([fetch(`${base}/healthz`).then((r) => r.ok, () => false), exited]);
    if (up) return { child, base };
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error('service did not start within 20 s');
}

/** SIGKILL, and wait until the process is gone. */
export async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await gone;
}
