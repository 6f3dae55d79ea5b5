import Papa from 'papaparse';
import type { TaskCreate } from '../api/types';

/** Columns that are task fields; every other column goes into userValues under its own name. */
const FIELDS = new Set(['targetNumber', 'allowedHoursBegin', 'allowedHours', 'onlyWeekdays', 'timezone', 'maxAttempts', 'execute', 'agentVersion']);

export interface ParsedCsv {
  tasks: TaskCreate[];
  columns: string[];
  /** Problems of the file itself (not of a task), by CSV line. */
  problems: string[];
}

const asBoolean = (v: string) => (/^(true|yes|1)$/i.test(v) ? true : /^(false|no|0)$/i.test(v) ? false : v);
const asNumber = (v: string) => (/^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v);

/**
 * One task per row, header first. Values are typed as the API expects when they look right and
 * sent as written when they do not, so the API's own error lands on that row's field.
 */
export function parseTasksCsv(text: string): ParsedCsv {
  const result = Papa.parse<Record<string, string>>(text.trim(), { header: true, skipEmptyLines: 'greedy', transformHeader: (h) => h.trim() });
  const problems = result.errors.map((e) => `line ${(e.row ?? 0) + 2}: ${e.message}`);
  const columns = result.meta.fields ?? [];
  if (!columns.includes('targetNumber')) problems.push('the header needs a targetNumber column');
  const tasks = result.data.map((row) => {
    const task: Record<string, unknown> = {};
    const userValues: Record<string, string> = {};
    for (const [column, raw] of Object.entries(row)) {
      const value = (raw ?? '').trim();
      if (!FIELDS.has(column)) {
        if (value !== '') userValues[column] = value;
      } else if (value === '') {
        continue;
      } else if (column === 'onlyWeekdays' || column === 'execute') {
        task[column] = asBoolean(value);
      } else if (column === 'targetNumber' || column === 'timezone') {
        task[column] = value;
      } else {
        task[column] = asNumber(value);
      }
    }
    if (Object.keys(userValues).length) task.userValues = userValues;
    return task as TaskCreate;
  });
  return { tasks, columns, problems };
}

/** `tasks[12].targetNumber` → row 12 and field targetNumber; null for a path that names no row. */
export function rowOf(path: string): { row: number; field: string } | null {
  const match = /^tasks\[(\d+)\](?:\.(.+))?$/.exec(path);
  return match ? { row: Number(match[1]), field: match[2] ?? '(row)' } : null;
}
