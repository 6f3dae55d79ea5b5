import { existsSync, readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const STATE = 'lab.json';

interface State {
  /** The `parley lab` process itself. */
  lab?: number;
  kamailio?: number;
  baresip?: number;
}

function readState(dir: string): State {
  try {
    return JSON.parse(readFileSync(join(dir, STATE), 'utf8')) as State;
  } catch {
    // none, or a torn file: nothing to stop by it
    return {};
  }
}

/** Whether `pid` is alive and runs `program` (a pid reused by another program is left alone). */
function runs(pid: number, program: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]?.endsWith(`/${program}`) === true;
  } catch {
    return false;
  }
}

async function gone(pid: number, program: string, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (runs(pid, program) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  return !runs(pid, program);
}

/**
 * The Kamailio and baresip of a lab run that ended without cleaning up (a crash, kill -9), found
 * by the process ids it wrote into its folder: stopped (SIGTERM, then SIGKILL), and the folder
 * emptied. Answers what was stopped, in words.
 */
export async function clearLeftovers(dir: string): Promise<string[]> {
  const stopped: string[] = [];
  if (existsSync(join(dir, STATE))) {
    const state = readState(dir);
    for (const program of ['kamailio', 'baresip'] as const) {
      const pid = state[program];
      if (typeof pid !== 'number' || !runs(pid, program)) continue;
      process.kill(pid, 'SIGTERM');
      // Kamailio's workers share its process group (it was started detached).
      if (!(await gone(pid, program, 3000))) process.kill(program === 'kamailio' ? -pid : pid, 'SIGKILL');
      await gone(pid, program, 3000);
      stopped.push(`${program} (pid ${pid})`);
    }
  }
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  return stopped;
}

function isLabProcess(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('lab');
  } catch {
    return false;
  }
}

/** The process id of the `parley lab` running with this folder, or null. */
export function runningLab(dir: string): number | null {
  const pid = readState(dir).lab;
  return pid !== undefined && pid !== process.pid && isLabProcess(pid) ? pid : null;
}

/**
 * `parley lab --stop`: the lab running with this folder is asked to stop (SIGTERM, as Ctrl-C) and
 * waited for until it has cleaned up; null when none runs there.
 */
export async function stopRunningLab(dir: string, timeoutMs: number): Promise<number | null> {
  const pid = runningLab(dir);
  const isLab = (): boolean => pid !== null && isLabProcess(pid);
  if (pid === null) return null;
  process.kill(pid, 'SIGTERM');
  const until = Date.now() + timeoutMs;
  while (isLab() && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  if (isLab()) throw new Error(`the lab (pid ${pid}) did not stop within ${timeoutMs / 1000} s`);
  return pid;
}

export async function recordProcesses(dir: string, state: State): Promise<void> {
  await writeFile(join(dir, STATE), JSON.stringify(state));
}

/** A WAV of silence (8 kHz mono 16-bit): the softphone's microphone when it has no sound card to use. */
export async function writeSilence(path: string, seconds: number): Promise<void> {
  const bytes = seconds * 8000 * 2;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + bytes, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(16000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(bytes, 40);
  await writeFile(path, Buffer.concat([header, Buffer.alloc(bytes)]));
}
