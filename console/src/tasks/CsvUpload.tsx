import { useId, useState } from 'react';
import { ApiError, inOrganization } from '../api/client';
import { ErrorBox } from '../components/form';
import { Table } from '../components/Table';
import { useScope, useSession } from '../session';
import { parseTasksCsv, rowOf, type ParsedCsv } from './csv';

const PREVIEW_ROWS = 10;

const cell = (value: unknown) => (value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value));

/** Upload a CSV of tasks: parsed here, previewed, sent as one all-or-nothing batch; each row's errors shown by row. */
export function CsvUpload({ agentId, onCreated }: { agentId: string; onCreated: () => void }) {
  const { api } = useSession();
  const scope = useScope();
  const input = useId();
  const [parsed, setParsed] = useState<ParsedCsv | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState(0);
  const [busy, setBusy] = useState(false);

  const read = async (file: File | undefined) => {
    setError(null);
    setCreated(0);
    setParsed(file ? parseTasksCsv(await file.text()) : null);
  };
  const send = async () => {
    if (!parsed) return;
    setBusy(true);
    setError(null);
    try {
      const tasks = await inOrganization(api, scope).batchCreateAgentTasks({ path: { agentId }, body: { tasks: parsed.tasks } });
      setCreated(tasks.length);
      setParsed(null);
      onCreated();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const rowErrors = new Map<number, string[]>();
  const unplaced: string[] = [];
  if (error instanceof ApiError) {
    for (const d of error.details) {
      const at = rowOf(d.path);
      if (at) rowErrors.set(at.row, [...(rowErrors.get(at.row) ?? []), `${at.field}: ${d.message}`]);
      else unplaced.push(`${d.path}: ${d.message}`);
    }
  }
  const shown = parsed ? [...new Set([...Array.from({ length: Math.min(PREVIEW_ROWS, parsed.tasks.length) }, (_, i) => i), ...rowErrors.keys()])].sort((a, b) => a - b) : [];

  return (
    <section className="card" aria-labelledby="upload">
      <h2 id="upload">Upload tasks (CSV)</h2>
      <p className="note">
        A header row, then one task per row. Columns <code>targetNumber</code>, <code>allowedHoursBegin</code>, <code>allowedHours</code>,{' '}
        <code>onlyWeekdays</code>, <code>timezone</code>, <code>maxAttempts</code>, <code>execute</code>, <code>agentVersion</code> (pins a version of
        the agent); any other column becomes a userValue.
        Up to 1,000 rows, all or nothing.
      </p>
      <label htmlFor={input}>CSV file</label>
      <input id={input} type="file" accept=".csv,text/csv" onChange={(e) => void read(e.target.files?.[0])} />
      {created > 0 && <p role="status" className="good">Created {created} tasks.</p>}
      {parsed && (
        <>
          <p role="status">{parsed.tasks.length} tasks read{parsed.tasks.length > PREVIEW_ROWS ? `; the first ${PREVIEW_ROWS} and any with errors are shown` : ''}.</p>
          {parsed.problems.length > 0 && <ul className="bad">{parsed.problems.map((p) => <li key={p}>{p}</li>)}</ul>}
          <Table caption="Tasks to upload" head={['Row', ...parsed.columns, 'Errors']}>
            {shown.map((i) => {
              const task = parsed.tasks[i] as Record<string, unknown>;
              const values = { ...(task.userValues as Record<string, unknown> | undefined), ...task };
              const errors = rowErrors.get(i);
              return (
                <tr key={i} className={errors ? 'row-invalid' : undefined}>
                  <td>{i + 1}</td>
                  {parsed.columns.map((c) => <td key={c}>{cell(values[c])}</td>)}
                  <td>{errors && <span className="field-error" role="alert">Row {i + 1}: {errors.join('; ')}</span>}</td>
                </tr>
              );
            })}
          </Table>
          {rowErrors.size > 0 && <p className="bad" role="alert">{rowErrors.size} rows have errors; nothing was created. Fix them and upload again.</p>}
          <button type="button" className="primary" disabled={busy || parsed.tasks.length === 0 || parsed.problems.length > 0} onClick={() => void send()}>
            Create {parsed.tasks.length} tasks
          </button>
        </>
      )}
      {error !== null && unplaced.length > 0 && <ErrorBox error={error} claimed={[...rowErrors.keys()].map((r) => `tasks[${r}]`)} />}
      {error !== null && !(error instanceof ApiError) && <ErrorBox error={error} />}
    </section>
  );
}
