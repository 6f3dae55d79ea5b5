/**
 * A resource as its YAML file holds it (a "document"): plain JSON values, ids replaced by names,
 * secrets by `${VARIABLE}` placeholders. The helpers here name files, name placeholders and
 * compare documents field by field.
 */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type Doc = Record<string, Json>;

/** What the API shows in place of a write-only value (a header value, a signing or hook secret). */
export const MASK = '********';
const PLACEHOLDER = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

export function placeholderName(value: Json): string | null {
  return typeof value === 'string' ? (PLACEHOLDER.exec(value)?.[1] ?? null) : null;
}

/** Code-point order: the same on every machine, whatever its locale. */
export const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const isObject = (value: Json | undefined): value is { [key: string]: Json } => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A file name from a resource's name: lower case ASCII words joined by `-`, at most 60 characters. */
export function slug(name: string, fallback: string): string {
  const words = name.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').slice(0, 60).replace(/^-+|-+$/g, '');
  return words || fallback;
}

/**
 * One file name per resource: its slug, and `-2`, `-3`… for the later ones (oldest first) whose
 * slug is taken. A name the last pull gave (`kept`, by id) stays while it still fits the
 * resource's name, so deleting one of two namesakes does not rename the other's file.
 */
export function fileNames<T extends { id: string; name: string; createdAt: string }>(items: readonly T[], fallback: string, kept: ReadonlyMap<string, string> = new Map()): Map<string, string> {
  const taken = new Set<string>();
  const names = new Map<string, string>();
  const ordered = [...items].sort((a, b) => byText(a.createdAt, b.createdAt) || byText(a.id, b.id));
  for (const item of ordered) {
    const before = kept.get(item.id);
    const base = slug(item.name, fallback);
    if (before !== undefined && !taken.has(before) && (before === base || new RegExp(`^${base}-[0-9]+$`).test(before))) {
      taken.add(before);
      names.set(item.id, before);
    }
  }
  for (const item of ordered) {
    if (names.has(item.id)) continue;
    const base = slug(item.name, fallback);
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base}-${n}`;
    taken.add(name);
    names.set(item.id, name);
  }
  return names;
}

const word = (text: string) => text.toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_+|_+$/g, '');

/** How an array item is named in a placeholder: its `name`, else its `type`, else its index (also when the name repeats). */
function itemWords(items: readonly Json[]): string[] {
  const labels = items.map((item, i) => {
    const label = isObject(item) ? (item.name ?? item.type) : undefined;
    return typeof label === 'string' && word(label) ? word(label) : String(i);
  });
  return labels.map((label, i) => (labels.indexOf(label) === labels.lastIndexOf(label) ? label : String(i)));
}

/**
 * Every masked value replaced by `${PARLEY_SECRET_<KIND>_<FILE>_<PATH>}`: the file's name and the
 * path to the value in upper case, array items named by their `name` (or `type`).
 */
export function withPlaceholders(value: Json, prefix: string): Json {
  if (value === MASK) return `\${${prefix}}`;
  if (Array.isArray(value)) {
    const words = itemWords(value);
    return value.map((item, i) => withPlaceholders(item, `${prefix}_${words[i]}`));
  }
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withPlaceholders(v, `${prefix}_${word(k)}`)]));
  return value;
}

export function secretPrefix(kindWord: string, file: string): string {
  return `PARLEY_SECRET_${kindWord}_${word(file)}`;
}

/** The placeholders of a document, in order of appearance. */
export function placeholders(value: Json): string[] {
  const name = placeholderName(value);
  if (name) return [name];
  if (Array.isArray(value)) return value.flatMap(placeholders);
  if (isObject(value)) return Object.values(value).flatMap(placeholders);
  return [];
}

/** The document with each placeholder replaced by its variable's value (every variable is known: checked before). */
export function fillPlaceholders(value: Json, env: Record<string, string | undefined>): Json {
  const name = placeholderName(value);
  if (name) return env[name] as string;
  if (Array.isArray(value)) return value.map((item) => fillPlaceholders(item, env));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillPlaceholders(v, env)]));
  return value;
}

const FIRST = ['type', 'name'];
const keyOrder = (a: string, b: string) => (FIRST.includes(b) ? 1 : 0) - (FIRST.includes(a) ? 1 : 0) || FIRST.indexOf(a) - FIRST.indexOf(b) || byText(a, b);

/**
 * Keys in one order at every level below the top (whose order each kind fixes), so a file reads
 * the same on every pull: `type` and `name` first (what an extension or hook is), then A to Z.
 */
export function sortedKeys(value: Json): Json {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (isObject(value)) return Object.fromEntries(Object.keys(value).sort(keyOrder).map((k) => [k, sortedKeys(value[k] as Json)]));
  return value;
}

/** A secret compares as "a secret": the service never shows its value, so push cannot tell it changed. */
const SECRET = Symbol('secret');
type Comparable = Json | typeof SECRET | undefined;
const comparable = (value: Json | undefined): Comparable => (value === MASK || (value !== undefined && placeholderName(value)) ? SECRET : value);

export interface FieldChange {
  path: string;
  from: Json | undefined;
  to: Json | undefined;
}

/** The fields that differ, leaf by leaf (arrays item by item): `extensions[0].parameters.serverUrl`. */
export function changes(from: Json | undefined, to: Json | undefined, path = ''): FieldChange[] {
  const a = comparable(from);
  const b = comparable(to);
  if (a === SECRET || b === SECRET) return a === b ? [] : [{ path, from, to }];
  if (Array.isArray(a) && Array.isArray(b)) {
    return Array.from({ length: Math.max(a.length, b.length) }, (_, i) => changes(a[i], b[i], `${path}[${i}]`)).flat();
  }
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
    return keys.flatMap((k) => changes(a[k], b[k], path ? `${path}.${k}` : k));
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [{ path, from, to }];
}

/** A value as diff prints it: JSON, `(none)` when absent, a secret as `(secret)`. */
export function shown(value: Json | undefined): string {
  if (value === undefined) return '(none)';
  if (comparable(value) === SECRET) return '(secret)';
  return JSON.stringify(value);
}
