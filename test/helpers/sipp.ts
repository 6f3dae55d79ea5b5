// Runs one sipp scenario (package sip-tester) on loopback. sipp exits 0 when every call
// of the scenario went exactly as written, so a test asserts the exit code to prove the
// peer saw what it expected (a CANCEL, an ACK, a correct digest...).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeUdpPort } from './kamailio.ts';

const SIPP = '/usr/bin/sipp';
export const SCENARIOS = new URL('../fixtures/sipp/', import.meta.url);

export interface SippOptions {
  /** File name in test/fixtures/sipp/. */
  scenario: string;
  /** For a UAC scenario: where to send (host:port). Omitted: sipp waits as a UAS. */
  remote?: string;
  /** Request-URI user for UAC scenarios (-s). */
  service?: string;
  /** Values for [key] fields in the scenario (-key name value). */
  keys?: Record<string, string>;
  /** Values for {{NAME}} placeholders, filled in before sipp reads the file (status lines, which sipp checks on load). */
  vars?: Record<string, string>;
  /** Overall limit in seconds, after which sipp gives up (and fails). */
  timeoutSeconds?: number;
  /** How many calls the scenario runs before sipp exits (-m); 1 unless given. */
  calls?: number;
  /** More command-line options, e.g. ['-rtp_echo', '-mp', '24900'] (benchmarks). */
  args?: string[];
}

export interface Sipp {
  port: number;
  /** Resolves when sipp has exited: its exit code and the messages it logged. */
  done: Promise<{ code: number | null; log: string }>;
  stop(): Promise<void>;
}

export async function startSipp(options: SippOptions): Promise<Sipp> {
  if (!existsSync(SIPP)) throw new Error('sipp is not installed; run: apt-get install -y sip-tester');
  const dir = await mkdtemp(join(tmpdir(), 'parley-sipp-'));
  const port = await freeUdpPort();
  const messages = join(dir, 'messages.log');
  const errors = join(dir, 'errors.log');
  const scenario = join(dir, options.scenario);
  const text = (await readFile(new URL(options.scenario, SCENARIOS), 'utf8')).replace(/\{\{([A-Z_]+)\}\}/g, (_, key: string) => {
    const v = options.vars?.[key];
    if (v === undefined) throw new Error(`sipp scenario ${options.scenario}: no value for {{${key}}}`);
    return v;
  });
  await writeFile(scenario, text);
  const args = [
    '-sf', scenario,
    '-i', '127.0.0.1', '-p', String(port), '-mi', '127.0.0.1',
    '-m', String(options.calls ?? 1), '-nostdin', '-timeout', `${options.timeoutSeconds ?? 20}s`, '-timeout_error',
    '-trace_msg', '-message_file', messages, '-trace_err', '-error_file', errors,
    ...Object.entries(options.keys ?? {}).flatMap(([k, v]) => ['-key', k, v]),
    ...(options.service ? ['-s', options.service] : []),
    ...(options.args ?? []),
    ...(options.remote ? [options.remote] : []),
  ];
  const child = spawn(SIPP, args, { stdio: ['ignore', 'ignore', 'pipe'], cwd: dir });
  // A sipp left behind when this process exits without stopping it (a failed bench, say) would hold
  // its ports for the next run. (A process killed by a signal still leaves it behind.)
  const reap = () => child.kill('SIGKILL');
  process.once('exit', reap);
  child.once('exit', () => process.off('exit', reap));
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-4000)));
  const done = new Promise<{ code: number | null; log: string }>((resolve) => {
    child.once('exit', (code) => {
      void Promise.all([readFile(messages, 'utf8').catch(() => ''), readFile(errors, 'utf8').catch(() => '')]).then(([m, e]) => {
        resolve({ code, log: `${stderr}\n--- errors ---\n${e.slice(-4000)}\n--- messages ---\n${m.slice(-12000)}` });
      });
    });
  });
  return {
    port,
    done,
    async stop() {
      if (child.exitCode === null) child.kill('SIGKILL');
      await done;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
