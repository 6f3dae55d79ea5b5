import { ConfigError } from '../../config.ts';
import { describeError } from '../io.ts';
import { fillPlaceholders, placeholders, type Json } from './documents.ts';
import type { Lock, LocalFile } from './folder.ts';
import type { IdOf, Org } from './kinds.ts';
import { remoteLabel } from './report.ts';
import type { Plan } from './plan.ts';

export interface Applied {
  /** The lock's resources after the push: what each file's resource now is on the service. */
  resources: Lock['resources'];
  failure: string | null;
}

/** Every variable the files push sends need, checked before anything is sent: a missing one names itself and its file. */
export function checkSecrets(plan: Plan, env: Record<string, string | undefined>): void {
  const missing: string[] = [];
  for (const step of plan.steps) {
    if (step.action !== 'create' && step.action !== 'update') continue;
    for (const name of placeholders(step.local.doc)) if (env[name] === undefined) missing.push(`  ${name} (${step.local.file})`);
  }
  if (missing.length) throw new ConfigError(`push needs these environment variables, which are not set (nothing was changed):\n${missing.join('\n')}`);
}

/**
 * Creates and updates in the plan's order (what is named before what names it), then deletes.
 * Stops at the first failure: what was done stays done and is in the lock.
 */
export async function apply(org: Org, plan: Plan, previous: Lock | null, env: Record<string, string | undefined>, say: (line: string) => void): Promise<Applied> {
  const ids = new Map<LocalFile, string>();
  const resources: Lock['resources'] = {};
  for (const step of plan.steps) {
    if (step.action === 'update' || step.action === 'unchanged') {
      ids.set(step.local, step.remote.id);
      resources[step.local.file] = { id: step.remote.id, updatedAt: step.remote.updatedAt };
    }
  }
  // A file not reached because of a failure, and a resource no file names (left as it is), keep what the lock knew of them.
  const untracked = new Set(plan.steps.flatMap((s) => (s.action === 'untracked' ? [s.remote.id] : [])));
  for (const [file, seen] of Object.entries(previous?.resources ?? {})) {
    const reached = file in resources;
    if (!reached && (untracked.has(seen.id) || plan.steps.some((s) => 'local' in s && s.local.file === file))) resources[file] = seen;
  }
  const idOf = (local: LocalFile): IdOf => (_kind, _name, field) => {
    const target = plan.target(local, field);
    if (!target) return null;
    const found = ids.get(target);
    if (!found) throw new ConfigError(`${local.file}: ${field} names ${target.file}, which is not on the service`);
    return found;
  };
  for (const step of plan.steps) {
    try {
      if (step.action === 'create' || step.action === 'update') {
        const body = step.kind.toBody(fillPlaceholders(step.local.doc, env) as Record<string, Json>, idOf(step.local));
        const remote = step.action === 'create' ? await step.kind.create(org, body) : await step.kind.update(org, step.remote.id, body);
        ids.set(step.local, remote.id);
        resources[step.local.file] = { id: remote.id, updatedAt: remote.updatedAt };
        say(step.action === 'create' ? `created ${step.local.file} (${remote.id})` : `updated ${step.local.file}: ${step.changes.map((c) => c.path).join(', ')}`);
      } else if (step.action === 'delete') {
        await step.kind.remove(org, step.remote.id);
        say(`deleted ${remoteLabel(step)}`);
      }
    } catch (err) {
      const what = 'local' in step ? step.local.file : remoteLabel(step);
      return { resources, failure: `${what}: ${describeError(err)}` };
    }
  }
  return { resources, failure: null };
}
