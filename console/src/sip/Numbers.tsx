import { useState, type FormEvent } from 'react';
import { inOrganization } from '../api/client';
import type { SipCredential, SipNumber } from '../api/types';
import { detailsOf, ErrorBox, errorsAt, SelectField, TextField } from '../components/form';
import { when } from '../components/Table';
import { useScope, useSession } from '../session';
import { Refusal } from './Refusal';

interface RowProps { number: SipNumber; credentials: readonly SipCredential[]; writable: boolean; onChanged: () => void }

/** One number: Edit and Delete (asked once more; the API refuses while an assistant or agent uses it). */
export function NumberRow({ number: n, credentials, writable, onChanged }: RowProps) {
  const { api } = useSession();
  const scope = useScope();
  const [mode, setMode] = useState<'view' | 'edit' | 'delete'>('view');
  const [error, setError] = useState<unknown>(null);
  const remove = async () => {
    setError(null);
    try {
      await inOrganization(api, scope).deleteSipNumber({ path: { sipNumberId: n.id } });
      onChanged();
    } catch (e) {
      setMode('view');
      setError(e);
    }
  };
  return (
    <tr>
      <td>{n.number}</td>
      <td>{n.name}</td>
      <td>{credentials.find((c) => c.id === n.sipCredentialId)?.name ?? n.sipCredentialId}</td>
      <td>{when(n.updatedAt)}</td>
      {writable && (
        <td>
          {mode === 'view' && (
            <div className="row">
              <button type="button" onClick={() => setMode('edit')} aria-label={`Edit ${n.number}`}>Edit</button>
              <button type="button" className="danger" onClick={() => setMode('delete')} aria-label={`Delete ${n.number}`}>Delete</button>
            </div>
          )}
          {mode === 'delete' && (
            <div className="row" role="group" aria-label={`Delete ${n.number}?`}>
              <button type="button" className="danger" onClick={() => void remove()}>Delete {n.number} for good</button>
              <button type="button" onClick={() => setMode('view')}>Keep it</button>
            </div>
          )}
          {mode === 'edit' && <NumberForm existing={n} credentials={credentials} onSaved={() => { setMode('view'); onChanged(); }} onCancel={() => setMode('view')} />}
          <Refusal error={error} advice="Give it another number (or none) on its page first." />
        </td>
      )}
    </tr>
  );
}

interface FormProps { existing?: SipNumber; credentials: readonly SipCredential[]; onSaved: () => void; onCancel?: () => void }

/** A new number, or an edit of one (a PUT: number, name and the credentials that carry it). */
export function NumberForm({ existing, credentials, onSaved, onCancel }: FormProps) {
  const { api } = useSession();
  const scope = useScope();
  const blank = { number: existing?.number ?? '', name: existing?.name ?? '', sipCredentialId: existing?.sipCredentialId ?? '' };
  const [form, setForm] = useState(blank);
  const [error, setError] = useState<unknown>(null);
  const details = detailsOf(error);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    const body = { number: form.number, sipCredentialId: form.sipCredentialId, ...(form.name ? { name: form.name } : {}) };
    try {
      if (existing) await inOrganization(api, scope).updateSipNumber({ path: { sipNumberId: existing.id }, body });
      else await inOrganization(api, scope).createSipNumber({ body });
      if (!existing) setForm(blank);
      onSaved();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <form className="inline-form" onSubmit={(e) => void submit(e)} noValidate aria-label={existing ? `Edit ${existing.number}` : 'New SIP number'}>
      <h3>{existing ? `Edit ${existing.number}` : 'New number'}</h3>
      <div className="grid3">
        <TextField label="Number (E.164)" value={form.number} onChange={(e) => setForm({ ...form, number: e.target.value })} errors={errorsAt(details, 'number')} />
        <TextField label="Number name" value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} errors={errorsAt(details, 'name')} />
        <SelectField label="Carried by" value={form.sipCredentialId} onChange={(e) => setForm({ ...form, sipCredentialId: e.target.value })} errors={errorsAt(details, 'sipCredentialId')}>
          <option value="">Choose credentials…</option>
          {credentials.map((c) => <option key={c.id} value={c.id}>{c.name}</option>)}
        </SelectField>
      </div>
      <div className="row">
        <button type="submit" className="primary">{existing ? 'Save' : 'Add number'}</button>
        {onCancel && <button type="button" onClick={onCancel}>Cancel</button>}
      </div>
      <ErrorBox error={error} claimed={['number', 'name', 'sipCredentialId']} />
    </form>
  );
}
