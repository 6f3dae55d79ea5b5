/** Keys that hold the whole name, compared without case, spaces, dashes, dots or underscores. */
const FULL_NAME_KEYS = ['name', 'fullname', 'calleename', 'contactname', 'customername', 'displayname'];
const FIRST_NAME_KEYS = ['firstname', 'givenname'];
const LAST_NAME_KEYS = ['lastname', 'surname', 'familyname'];
const MAX_NAME = 80;

const normal = (key: string) => key.toLowerCase().replace(/[\s._-]/g, '');

/**
 * The callee's name from a task's userValues, or null: a whole-name key first (`name`,
 * `fullName`, `customer_name`…), else first and last name keys joined. Only non-empty strings
 * count; the keys are listed in docs/console.md.
 */
export function calleeName(userValues: Record<string, unknown>): string | null {
  const byKey = new Map<string, string>();
  for (const [key, value] of Object.entries(userValues)) {
    const k = normal(key);
    if (typeof value === 'string' && value.trim() !== '' && !byKey.has(k)) byKey.set(k, value.trim());
  }
  const pick = (keys: string[]) => keys.map((k) => byKey.get(k)).find((v) => v !== undefined);
  const name = pick(FULL_NAME_KEYS) ?? [pick(FIRST_NAME_KEYS), pick(LAST_NAME_KEYS)].filter(Boolean).join(' ');
  if (!name) return null;
  return name.length > MAX_NAME ? `${name.slice(0, MAX_NAME - 1)}…` : name;
}

export interface DayRow {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  created: number;
  completed: number;
  failed: number;
}

/** What the day counts read of a task (an API task has these fields). */
interface DatedTask {
  status: string;
  createdAt: string;
  completedAt: string | null;
}

/** Tasks created, completed and failed per UTC day, newest day first; only days with something in them. */
export function perDay(tasks: readonly DatedTask[]): DayRow[] {
  const days = new Map<string, DayRow>();
  const row = (iso: string) => {
    const day = iso.slice(0, 10);
    let r = days.get(day);
    if (!r) days.set(day, (r = { day, created: 0, completed: 0, failed: 0 }));
    return r;
  };
  for (const task of tasks) {
    row(task.createdAt).created += 1;
    if (task.completedAt && task.status === 'COMPLETED') row(task.completedAt).completed += 1;
    if (task.completedAt && task.status === 'FAILED') row(task.completedAt).failed += 1;
  }
  return [...days.values()].sort((a, b) => b.day.localeCompare(a.day));
}

/** Counts of each outcome, most frequent first (ties by name). */
export function countOutcomes(outcomes: readonly string[]): [string, number][] {
  const counts = new Map<string, number>();
  for (const o of outcomes) counts.set(o, (counts.get(o) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

/** Runs `work` over `items`, at most `limit` at once, answers in the items' order. */
export async function inBatches<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += limit) results.push(...(await Promise.all(items.slice(i, i + limit).map(work))));
  return results;
}
