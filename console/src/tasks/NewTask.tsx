import { useState, type FormEvent } from 'react';
import { inOrganization } from '../api/client';
import type { TaskCreate } from '../api/types';
import { detailsOf, ErrorBox, errorsAt, TextField } from '../components/form';
import { useScope, useSession } from '../session';
import { checkTaskForm, plainApiMessage, type TaskForm } from './task-form';

const BLANK: TaskForm = { targetNumber: '', values: [{ key: '', value: '' }], allowedHoursBegin: '', allowedHours: '', onlyWeekdays: false, timezone: '', maxAttempts: '', agentVersion: '', execute: true };
const FIELDS = ['targetNumber', 'userValues', 'allowedHoursBegin', 'allowedHours', 'onlyWeekdays', 'timezone', 'maxAttempts', 'agentVersion', 'execute'];

/** One task for the agent: the callee's number, their values, when it may call; errors at each field, the form's own and the API's. */
export function NewTask({ agentId, onCreated }: { agentId: string; onCreated: () => void }) {
  const { api } = useSession();
  const scope = useScope();
  const [form, setForm] = useState<TaskForm>(BLANK);
  const [problems, setProblems] = useState<Record<string, string[]>>({});
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const set = (patch: Partial<TaskForm>) => setForm({ ...form, ...patch });
  const apiDetails = detailsOf(error);
  const at = (path: string) => [...(problems[path] ?? []), ...errorsAt(apiDetails, path).map(plainApiMessage)];
  const atValue = (i: number) => problems[`values[${i}]`] ?? [];

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setCreated(null);
    const checked = checkTaskForm(form);
    setProblems(checked.problems);
    if (!checked.body) return;
    setBusy(true);
    try {
      const task = await inOrganization(api, scope).createAgentTask({ path: { agentId }, body: checked.body as TaskCreate });
      setCreated(`Created a task to ${task.targetNumber} (${task.status.toLowerCase()}).`);
      setForm(BLANK);
      onCreated();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const row = (i: number, patch: Partial<TaskForm['values'][number]>) => set({ values: form.values.map((v, j) => (j === i ? { ...v, ...patch } : v)) });

  return (
    <form className="card" onSubmit={(e) => void submit(e)} noValidate aria-labelledby="new-task">
      <h2 id="new-task">New task</h2>
      <p className="note">One call for this agent to make. Fields marked * are required; the rest may stay empty.</p>
      <div className="grid3">
        <TextField label="Callee number *" value={form.targetNumber} onChange={(e) => set({ targetNumber: e.target.value })} errors={at('targetNumber')}
          hint="International format: + and the country code, e.g. +49 30 1234567" autoComplete="off" required />
        <TextField label="Window opens at (hour)" type="number" min={0} max={23} value={form.allowedHoursBegin} onChange={(e) => set({ allowedHoursBegin: e.target.value })}
          errors={at('allowedHoursBegin')} hint="0–23; empty: any time" />
        <TextField label="Window length (hours)" type="number" min={1} max={24} value={form.allowedHours} onChange={(e) => set({ allowedHours: e.target.value })}
          errors={at('allowedHours')} hint="1–24; set with the opening hour" />
        <TextField label="Time zone" value={form.timezone} onChange={(e) => set({ timezone: e.target.value })} errors={at('timezone')} hint="e.g. Europe/Berlin; empty: UTC" autoComplete="off" />
        <TextField label="Attempts at most" type="number" min={1} max={10} value={form.maxAttempts} onChange={(e) => set({ maxAttempts: e.target.value })}
          errors={at('maxAttempts')} hint="1–10; empty: 3" />
        <TextField label="Agent version" type="number" min={1} value={form.agentVersion} onChange={(e) => set({ agentVersion: e.target.value })}
          errors={at('agentVersion')} hint="Pins a version; empty: the current one at each call" />
      </div>
      <div className="row">
        <label><input type="checkbox" checked={form.onlyWeekdays} onChange={(e) => set({ onlyWeekdays: e.target.checked })} /> Weekdays only (Monday to Friday)</label>
        <label><input type="checkbox" checked={form.execute} onChange={(e) => set({ execute: e.target.checked })} /> Schedule now (else it waits as pending until you run it)</label>
      </div>
      <fieldset>
        <legend>Callee values (fill {'{{name}}'} placeholders; a <code>name</code> or <code>firstName</code> value names the callee on the board)</legend>
        {form.values.map((v, i) => (
          <div className="row user-value" key={i}>
            <TextField label={`Value ${i + 1} name`} value={v.key} onChange={(e) => row(i, { key: e.target.value })} errors={atValue(i)} autoComplete="off" />
            <TextField label={`Value ${i + 1}`} value={v.value} onChange={(e) => row(i, { value: e.target.value })} autoComplete="off" />
            <button type="button" onClick={() => set({ values: form.values.filter((_, j) => j !== i) })} aria-label={`Remove value ${i + 1}`}>Remove</button>
          </div>
        ))}
        {at('userValues').length > 0 && <p className="field-error" role="alert">{at('userValues').join('; ')}</p>}
        <button type="button" onClick={() => set({ values: [...form.values, { key: '', value: '' }] })}>Add a value</button>
      </fieldset>
      <button type="submit" className="primary" disabled={busy}>Create task</button>
      {Object.keys(problems).length > 0 && <p className="bad" role="alert">Fix the fields marked above; nothing was sent.</p>}
      {created && <p role="status" className="good">{created}</p>}
      <ErrorBox error={error} claimed={FIELDS} />
    </form>
  );
}
