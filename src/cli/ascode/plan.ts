import { ConfigError } from '../../config.ts';
import { changes, type Doc, type FieldChange, type Json } from './documents.ts';
import type { Lock, LocalFile } from './folder.ts';
import { KINDS, type Kind, type KindName, type Org, type Remote } from './kinds.ts';

export type Remotes = Map<KindName, Remote[]>;

export async function readRemotes(org: Org): Promise<Remotes> {
  const remotes: Remotes = new Map();
  for (const kind of KINDS) {
    const items: Remote[] = [];
    for await (const item of kind.list(org)) items.push(item);
    remotes.set(kind.name, items);
  }
  return remotes;
}

/** What push does with one resource; `conflict` says why it is refused without --force. */
export type Step =
  | { action: 'create'; kind: Kind; local: LocalFile; conflict: string | null }
  | { action: 'update'; kind: Kind; local: LocalFile; remote: Remote; changes: FieldChange[]; conflict: string | null }
  | { action: 'unchanged'; kind: Kind; local: LocalFile; remote: Remote }
  | { action: 'delete'; kind: Kind; remote: Remote; conflict: string | null }
  | { action: 'untracked'; kind: Kind; remote: Remote };

export interface Plan {
  steps: Step[];
  /** The file each reference of a file names: `assistants/a.yaml` → strategy → `strategies/warm.yaml`. */
  target(local: LocalFile, field: string): LocalFile | null;
}

/** The file a reference names: a file of that kind whose `name` is the value (when only one has it), else whose file name is. */
function resolver(locals: readonly LocalFile[]) {
  return (from: LocalFile, kindName: KindName, value: Json | undefined, field: string): LocalFile | null => {
    if (value === null || value === undefined) return null;
    const ofKind = locals.filter((l) => l.kind.name === kindName);
    const byName = ofKind.filter((l) => l.doc.name === value);
    const found = byName.length === 1 ? byName[0] : ofKind.find((l) => l.base === value);
    const folder = KINDS.find((k) => k.name === kindName)?.folder;
    if (!found) throw new ConfigError(`${from.file}: ${field} ${JSON.stringify(value)} names nothing in ${folder}/ (a name, or a file name without .yaml)`);
    return found;
  };
}

/** Which remote resource each file is: the one the lock names for it, else the one of the same name. */
function match(locals: readonly LocalFile[], remotes: Remotes, lock: Lock | null): Map<LocalFile, Remote> {
  const matched = new Map<LocalFile, Remote>();
  const used = new Set<string>();
  for (const local of locals) {
    const id = lock?.resources[local.file]?.id;
    const remote = remotes.get(local.kind.name)?.find((r) => r.id === id);
    if (remote) {
      matched.set(local, remote);
      used.add(remote.id);
    }
  }
  for (const local of locals) {
    if (matched.has(local) || lock?.resources[local.file]) continue;
    const remote = remotes.get(local.kind.name)?.find((r) => !used.has(r.id) && r.name === local.doc.name);
    if (remote) {
      matched.set(local, remote);
      used.add(remote.id);
    }
  }
  return matched;
}

/** Why the service's copy may not be overwritten: changed, made or deleted since the folder last matched it. */
function staleness(remote: Remote, lock: Lock | null): string | null {
  const seen = lock ? Object.values(lock.resources).find((r) => r.id === remote.id) : undefined;
  if (!seen) return `made on the service since the last pull (updatedAt ${remote.updatedAt})`;
  return seen.updatedAt === remote.updatedAt ? null : `changed on the service since the last pull (updatedAt ${seen.updatedAt}, now ${remote.updatedAt})`;
}

/**
 * What push would do: each file created, updated (with its changed fields) or left as it is,
 * and each resource of the service no file names deleted (`prune`) or left alone.
 */
export function plan(locals: readonly LocalFile[], remotes: Remotes, lock: Lock | null, prune: boolean): Plan {
  const resolve = resolver(locals);
  // Every reference names a file of the folder, or nothing is planned.
  for (const local of locals) for (const [field, kindName] of Object.entries(local.kind.references)) resolve(local, kindName, local.doc[field], field);
  const matched = match(locals, remotes, lock);
  const remoteName = (kind: KindName, id: string | null) => (id === null ? null : (remotes.get(kind)?.find((r) => r.id === id)?.name ?? id));
  const steps: Step[] = [];
  for (const local of locals) {
    const remote = matched.get(local);
    if (!remote) {
      const lost = lock?.resources[local.file];
      steps.push({ action: 'create', kind: local.kind, local, conflict: lost ? `deleted on the service since the last pull (it was ${lost.id})` : null });
      continue;
    }
    // References compare by what they name: the remote's id against the id of the file's target.
    const wanted: Doc = { ...local.doc };
    const had = local.kind.toDoc(remote, (_kind, id) => id);
    for (const [field, kindName] of Object.entries(local.kind.references)) {
      const target = resolve(local, kindName, local.doc[field], field);
      wanted[field] = target ? (matched.get(target)?.id ?? `a new ${target.file}`) : null;
    }
    const found = changes(had, wanted).map((c) => {
      const kindName = local.kind.references[c.path];
      return kindName ? { path: c.path, from: remoteName(kindName, (c.from ?? null) as string | null), to: local.doc[c.path] ?? null } : c;
    });
    steps.push(found.length
      ? { action: 'update', kind: local.kind, local, remote, changes: found, conflict: staleness(remote, lock) }
      : { action: 'unchanged', kind: local.kind, local, remote });
  }
  const named = new Set([...matched.values()].map((r) => r.id));
  for (const kind of [...KINDS].reverse()) {
    for (const remote of remotes.get(kind.name) ?? []) {
      if (named.has(remote.id)) continue;
      steps.push(prune ? { action: 'delete', kind, remote, conflict: staleness(remote, lock) } : { action: 'untracked', kind, remote });
    }
  }
  return { steps, target: (local, field) => resolve(local, local.kind.references[field] as KindName, local.doc[field], field) };
}
