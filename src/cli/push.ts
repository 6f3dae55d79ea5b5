import type { Command } from 'commander';
import { ConfigError } from '../config.ts';
import { apply, checkSecrets } from './ascode/apply.ts';
import { LOCK_FILE, readFolder, readLock, writeLock, type Lock } from './ascode/folder.ts';
import { plan, readRemotes, type Plan } from './ascode/plan.ts';
import { conflicts, counts, describe } from './ascode/report.ts';
import { openScope, scopedCommand, type Scope, type ScopeOptions } from './ascode/scope.ts';
import type { CliIo, Outcome } from './io.ts';

interface PushOptions extends ScopeOptions {
  prune?: boolean;
  force?: boolean;
}

/** The folder, its lock and the service, read and compared. A lock of another organization is refused (unless forced). */
async function compare(io: CliIo, dir: string, options: PushOptions, command: string): Promise<{ scope: Scope; lock: Lock | null; plan: Plan }> {
  const scope = openScope(io, options, command);
  const locals = readFolder(dir);
  const lock = readLock(dir);
  if (lock && (lock.vendor !== scope.vendor || lock.organization !== scope.organization) && !options.force) {
    throw new ConfigError(`${dir} was pulled from organization ${lock.organization} (vendor ${lock.vendor}), not ${scope.organization}: pull into another folder, or pass --force to push it here`);
  }
  const remotes = await readRemotes(scope.org);
  // A lock of another organization says nothing of this one's resources.
  const known = lock && lock.organization === scope.organization ? lock : null;
  return { scope, lock: known, plan: plan(locals, remotes, known, options.prune === true) };
}

/** `parley diff <dir>`: what push would change, resource by resource and field by field. */
export function diffCommand(io: CliIo, done: (outcome: Outcome) => void): Command {
  return scopedCommand('diff', 'the read permissions (a viewer token)')
    .summary('print what push would change, field by field')
    .description('Compare <dir> with the organization on the service and print what push would do: + create, ~ update (each field: old → new), - delete (with --prune), ? a resource no file names.\nSecrets are not compared (the service never shows them). Exits 0 whether or not there are changes. See docs/as-code.md.')
    .option('--prune', 'show the deletes push --prune would make')
    .action(async (dir: string, options: PushOptions) => {
      const { plan: found } = await compare(io, dir, options, 'diff');
      const lines = describe(found.steps);
      io.stdout.write(lines.length ? `${lines.join('\n')}\n` : '');
      io.stdout.write(`diff: ${counts(found.steps)}\n`);
      done(0);
    });
}

/** `parley push <dir>`: the service made like the folder; refused when the service changed since the last pull. */
export function pushCommand(io: CliIo, done: (outcome: Outcome) => void): Command {
  return scopedCommand('push', 'the write permissions (an editor token)')
    .summary('apply the YAML files to the organization (create, update, --prune deletes)')
    .description(`Make the organization like <dir>: create what is new, update what differs (nothing is sent for a resource that does not), and with --prune delete what no file names.\nRefused (exit 1, nothing changed) when a resource it would write changed on the service since the last pull (${LOCK_FILE}), unless --force; the lock is updated after the push.\nSecrets come from the environment variables their placeholders name. Exit codes: 0 done or nothing to do, 1 refused or failed, 2 usage. See docs/as-code.md.`)
    .option('--prune', 'delete the resources of the organization that no file names')
    .option('--force', 'push even when the service changed since the last pull (its changes are overwritten)')
    .action(async (dir: string, options: PushOptions) => {
      const { scope, lock, plan: found } = await compare(io, dir, options, 'push');
      const refused = conflicts(found.steps);
      if (refused.length && !options.force) {
        const names = refused.map((s) => `  ${'local' in s ? s.local.file : `${s.kind.folder}/${JSON.stringify(s.remote.name)}`}: ${s.conflict}`);
        io.stderr.write(`parley: push refused, nothing was changed: the service changed since the last pull\n${names.join('\n')}\nRun parley pull into a fresh folder to see the service's version, or push --force to overwrite it.\n`);
        return done(1);
      }
      const env = io.env ?? process.env;
      checkSecrets(found, env);
      const applied = await apply(scope.org, found, lock, env, (line) => io.stdout.write(`${line}\n`));
      writeLock(dir, { vendor: scope.vendor, organization: scope.organization, resources: applied.resources });
      if (applied.failure) {
        io.stderr.write(`parley: push stopped: ${applied.failure}\n(what was done before is on the service and in ${LOCK_FILE})\n`);
        return done(1);
      }
      const acted = found.steps.some((s) => s.action === 'create' || s.action === 'update' || s.action === 'delete');
      io.stdout.write(acted ? `push: done (${counts(found.steps).replace(/to /g, '')})\n` : 'push: nothing to do\n');
      done(0);
    });
}
