import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { ConfigError } from '../../config.ts';
import type { Doc } from './documents.ts';
import { KINDS, type Kind } from './kinds.ts';

/** One resource file of the folder: `assistants/order-desk.yaml`, its kind, its base name and what it holds. */
export interface LocalFile {
  kind: Kind;
  file: string;
  base: string;
  doc: Doc;
}

export const LOCK_FILE = '.parley-lock.yaml';

/** What the last pull or push saw of each file's resource: the organization, and per file the id and updatedAt. */
export interface Lock {
  vendor: string;
  organization: string;
  resources: Record<string, { id: string; updatedAt: string }>;
}

const YAML_OPTIONS = { lineWidth: 0, aliasDuplicateObjects: false } as const;

export function toYaml(value: unknown): string {
  return stringify(value, YAML_OPTIONS);
}

function parseFile(path: string, file: string): unknown {
  try {
    return parse(readFileSync(path, 'utf8')) as unknown;
  } catch (err) {
    throw new ConfigError(`${file} is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
}

/** The folder's resource files, kind by kind in push order, files by name. Anything else in the folder is left alone. */
export function readFolder(dir: string): LocalFile[] {
  if (!existsSync(dir)) throw new ConfigError(`There is no folder ${dir} (parley pull ${dir} writes one)`);
  const files: LocalFile[] = [];
  for (const kind of KINDS) {
    const folder = join(dir, kind.folder);
    if (!existsSync(folder)) continue;
    for (const entry of readdirSync(folder).filter((f) => f.endsWith('.yaml')).sort()) {
      const file = `${kind.folder}/${entry}`;
      const doc = parseFile(join(folder, entry), file);
      if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new ConfigError(`${file} must hold a mapping (name: …), not ${Array.isArray(doc) ? 'a list' : JSON.stringify(doc)}`);
      if (typeof (doc as Doc).name !== 'string' || !(doc as { name: string }).name.trim()) throw new ConfigError(`${file} needs a name: a non-empty string`);
      const unknown = Object.keys(doc).filter((field) => !kind.fields.includes(field));
      if (unknown.length) throw new ConfigError(`${file}: no field ${unknown.join(', ')} in ${kind.folder}/ (the fields are ${kind.fields.join(', ')})`);
      files.push({ kind, file, base: entry.slice(0, -'.yaml'.length), doc: { ...kind.defaults, ...(doc as Doc) } });
    }
  }
  return files;
}

/** Replaces the folder's resource files by these (a resource gone from the service loses its file). */
export function writeFolder(dir: string, files: readonly LocalFile[]): void {
  for (const kind of KINDS) {
    const folder = join(dir, kind.folder);
    if (existsSync(folder)) for (const entry of readdirSync(folder).filter((f) => f.endsWith('.yaml'))) rmSync(join(folder, entry));
  }
  for (const { kind, file, doc } of files) {
    mkdirSync(join(dir, kind.folder), { recursive: true });
    writeFileSync(join(dir, file), toYaml(doc));
  }
}

export function readLock(dir: string): Lock | null {
  const path = join(dir, LOCK_FILE);
  if (!existsSync(path)) return null;
  const lock = parseFile(path, LOCK_FILE) as Partial<Lock> | null;
  if (!lock || typeof lock.vendor !== 'string' || typeof lock.organization !== 'string' || typeof lock.resources !== 'object' || lock.resources === null) {
    throw new ConfigError(`${LOCK_FILE} is not one parley wrote (vendor, organization, resources); pull again, or delete it and push with --force`);
  }
  return lock as Lock;
}

export function writeLock(dir: string, lock: Lock): void {
  const resources = Object.fromEntries(Object.keys(lock.resources).sort().map((file) => [file, lock.resources[file]]));
  const header = '# Written by parley pull and push: what the service had when this folder last matched it.\n# push refuses to overwrite a resource changed since (unless --force). Commit it with the folder.\n';
  writeFileSync(join(dir, LOCK_FILE), header + toYaml({ vendor: lock.vendor, organization: lock.organization, resources }));
}
