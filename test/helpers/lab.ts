import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The Kamailio and baresip of a `parley lab` run that a failed test left behind, by the process
 * ids the lab keeps in its folder (they run in their own process groups, outside the test's).
 */
export function stopLabLeftovers(labDir: string): void {
  const state = join(labDir, 'lab.json');
  if (!existsSync(state)) return;
  for (const [program, pid] of Object.entries(JSON.parse(readFileSync(state, 'utf8')) as Record<string, number>)) {
    try {
      process.kill(program === 'kamailio' ? -pid : pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}
