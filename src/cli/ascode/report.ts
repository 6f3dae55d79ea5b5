import { shown } from './documents.ts';
import type { Step } from './plan.ts';

/** How a resource of the service no file names is called in the output: `agents/Outbound (id)`. */
export const remoteLabel = (step: Extract<Step, { remote: unknown }>) => `${step.kind.folder}/${JSON.stringify(step.remote.name)} (${step.remote.id})`;

/** The lines diff prints, one block per resource push would touch: `~ file`, then `    path: old → new`. */
export function describe(steps: readonly Step[]): string[] {
  const lines: string[] = [];
  const flag = (conflict: string | null) => (conflict ? `  [refused without --force: ${conflict}]` : '');
  for (const step of steps) {
    if (step.action === 'create') lines.push(`+ ${step.local.file}: create ${JSON.stringify(step.local.doc.name)}${flag(step.conflict)}`);
    if (step.action === 'update') {
      lines.push(`~ ${step.local.file}: update${flag(step.conflict)}`);
      for (const c of step.changes) lines.push(`    ${c.path}: ${shown(c.from)} → ${shown(c.to)}`);
    }
    if (step.action === 'delete') lines.push(`- ${remoteLabel(step)}: delete (no file names it)${flag(step.conflict)}`);
    if (step.action === 'untracked') lines.push(`? ${remoteLabel(step)}: no file names it; left as it is (push --prune deletes it)`);
  }
  return lines;
}

export function counts(steps: readonly Step[]): string {
  const n = (action: Step['action']) => steps.filter((s) => s.action === action).length;
  return `${n('create')} to create, ${n('update')} to update, ${n('delete')} to delete, ${n('unchanged')} unchanged`;
}

export const conflicts = (steps: readonly Step[]) => steps.filter((s): s is Extract<Step, { conflict: string | null }> => 'conflict' in s && s.conflict !== null);
