import { existsSync, mkdirSync } from 'node:fs';
import type { Command } from 'commander';
import { byText, fileNames, secretPrefix, withPlaceholders, type Doc } from './ascode/documents.ts';
import { readLock, writeFolder, writeLock, type LocalFile, type Lock } from './ascode/folder.ts';
import { KINDS, type KindName } from './ascode/kinds.ts';
import { readRemotes } from './ascode/plan.ts';
import { openScope, scopedCommand, type ScopeOptions } from './ascode/scope.ts';
import type { CliIo, Outcome } from './io.ts';

/** The file names the folder's lock gives, by folder and id (none when it has no lock of this organization). */
function keptNames(dir: string, organization: string): Map<string, Map<string, string>> {
  const kept = new Map<string, Map<string, string>>();
  const lock = existsSync(dir) ? readLock(dir) : null;
  if (lock?.organization !== organization) return kept;
  for (const [file, { id }] of Object.entries(lock.resources)) {
    const [folder, entry] = file.split('/');
    if (!folder || !entry?.endsWith('.yaml')) continue;
    if (!kept.has(folder)) kept.set(folder, new Map());
    kept.get(folder)?.set(id, entry.slice(0, -'.yaml'.length));
  }
  return kept;
}

/**
 * `parley pull <dir>`: the organization's strategies, SIP credentials and numbers, assistants and
 * agents (with their call event hooks) as one YAML file each, references by name, secrets as
 * `${PARLEY_SECRET_…}` placeholders; and the lock file push checks the service against.
 */
export function pullCommand(io: CliIo, done: (outcome: Outcome) => void): Command {
  return scopedCommand('pull', 'the read permissions (a viewer token)')
    .summary('write the organization\'s configuration as YAML files (docs/as-code.md)')
    .description('Write the organization\'s strategies, SIP credentials, SIP numbers, assistants and agents to <dir>, one YAML file each, and the lock file push checks against.\nSecrets are never written: each is a ${PARLEY_SECRET_…} placeholder that push fills from the environment. Files of resources gone from the service are removed. See docs/as-code.md.')
    .action(async (dir: string, options: ScopeOptions) => {
      const { org, vendor, organization } = openScope(io, options, 'pull');
      const remotes = await readRemotes(org);
      const bases = new Map<KindName, Map<string, string>>();
      const kept = keptNames(dir, organization);
      for (const kind of KINDS) bases.set(kind.name, fileNames(remotes.get(kind.name) ?? [], kind.name.toLowerCase(), kept.get(kind.folder)));
      // A reference is the resource's name, or its file's name when another of its kind has the same name.
      const nameOf = (kind: KindName, id: string | null): string | null => {
        if (id === null) return null;
        const items = remotes.get(kind) ?? [];
        const item = items.find((r) => r.id === id);
        if (!item) return id;
        return items.filter((r) => r.name === item.name).length === 1 ? item.name : (bases.get(kind)?.get(id) ?? id);
      };
      const files: LocalFile[] = [];
      const lock: Lock = { vendor, organization, resources: {} };
      for (const kind of KINDS) {
        for (const remote of remotes.get(kind.name) ?? []) {
          const base = bases.get(kind.name)?.get(remote.id) as string;
          const doc = withPlaceholders(kind.toDoc(remote, nameOf), secretPrefix(kind.word, base)) as Doc;
          files.push({ kind, file: `${kind.folder}/${base}.yaml`, base, doc });
          lock.resources[`${kind.folder}/${base}.yaml`] = { id: remote.id, updatedAt: remote.updatedAt };
        }
      }
      files.sort((a, b) => byText(a.file, b.file));
      mkdirSync(dir, { recursive: true });
      writeFolder(dir, files);
      writeLock(dir, lock);
      const counts = KINDS.map((k) => `${files.filter((f) => f.kind === k).length} ${k.folder}`).join(', ');
      io.stdout.write(`pulled ${counts} into ${dir}\n`);
      done(0);
    });
}
