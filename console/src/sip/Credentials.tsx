import { useState, type FormEvent } from 'react';
import { inOrganization } from '../api/client';
import type { SipCredential, Validation } from '../api/types';
import { detailsOf, ErrorBox, errorsAt, nameProblem, SelectField, TextField } from '../components/form';
import { useScope, useSession } from '../session';
import { Refusal } from './Refusal';

interface RowProps { credential: SipCredential; writable: boolean; onChanged: () => void }

/** One set of credentials: Validate (a real REGISTER, its answer shown), and Edit and Delete for who may write SIP. */
export function CredentialRow({ credential: c, writable, onChanged }: RowProps) {
  const { api } = useSession();
  const scope = useScope();
  const [mode, setMode] = useState<'view' | 'edit' | 'delete'>('view');
  const [result, setResult] = useState<Validation | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const validate = async () => {
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      setResult(await inOrganization(api, scope).validateSipCredential({ path: { sipCredentialId: c.id } }));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const remove = async () => {
    setError(null);
    try {
      await inOrganization(api, scope).deleteSipCredential({ path: { sipCredentialId: c.id } });
      onChanged();
    } catch (e) {
      setMode('view');
      setError(e);
    }
  };
  return (
    <tr>
      <td>{c.name}</td>
      <td>{c.hostname}:{c.port} ({c.transport})</td>
      <td>{c.username}</td>
      <td>{c.maxAgentTasks}</td>
      {writable && <td>
        <div className="row">
          {mode === 'view' && (
            <>
              <button type="button" onClick={() => void validate()} disabled={busy} aria-label={`Validate ${c.name}`}>{busy ? 'Registering…' : 'Validate'}</button>
              <button type="button" onClick={() => setMode('edit')} aria-label={`Edit ${c.name}`}>Edit</button>
              <button type="button" className="danger" onClick={() => setMode('delete')} aria-label={`Delete ${c.name}`}>Delete</button>
            </>
          )}
        </div>
        {result && (
          <span role="status" className={result.successful ? 'good' : 'bad'}>
            {' '}{result.successful ? 'Registered' : 'Refused'}: {result.statusCode ?? 'no answer'} {result.reason}
          </span>
        )}
        {mode === 'delete' && (
          <div className="row" role="group" aria-label={`Delete ${c.name}?`}>
            <button type="button" className="danger" onClick={() => void remove()}>Delete {c.name} for good</button>
            <button type="button" onClick={() => setMode('view')}>Keep them</button>
          </div>
        )}
        {mode === 'edit' && <CredentialForm existing={c} onSaved={() => { setMode('view'); setResult(null); onChanged(); }} onCancel={() => setMode('view')} />}
        <Refusal error={error} advice="Delete that number, or move it to other credentials, first." />
      </td>}
    </tr>
  );
}

type Transport = 'udp' | 'tcp' | 'tls';
const FIELDS = ['name', 'hostname', 'port', 'transport', 'username', 'password', 'maxAgentTasks'];

/** New credentials, or an edit of stored ones (a PATCH: an empty password keeps the stored one, and `register` is left as it is). */
export function CredentialForm({ existing, onSaved, onCancel }: { existing?: SipCredential; onSaved: () => void; onCancel?: () => void }) {
  const { api } = useSession();
  const scope = useScope();
  const blank = {
    name: existing?.name ?? '', hostname: existing?.hostname ?? '', port: String(existing?.port ?? 5060), transport: existing?.transport ?? 'udp',
    username: existing?.username ?? '', password: '', maxAgentTasks: String(existing?.maxAgentTasks ?? 1),
  };
  const [form, setForm] = useState(blank);
  const [error, setError] = useState<unknown>(null);
  const [local, setLocal] = useState<string[]>([]);
  const details = detailsOf(error);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setLocal(nameProblem(form.name));
    if (nameProblem(form.name).length) return;
    const fields = { ...form, name: form.name.trim(), port: Number(form.port), maxAgentTasks: Number(form.maxAgentTasks) };
    try {
      if (existing) {
        const { password, ...rest } = fields;
        await inOrganization(api, scope).patchSipCredential({ path: { sipCredentialId: existing.id }, body: { ...rest, ...(password ? { password } : {}) } });
      } else {
        await inOrganization(api, scope).createSipCredential({ body: fields });
        setForm(blank);
      }
      onSaved();
    } catch (e) {
      setError(e);
    }
  };
  const field = (key: Exclude<keyof typeof blank, 'transport'>, label: string, type = 'text', hint?: string) => (
    <TextField
      label={label} type={type} value={form[key]} onChange={(e) => setForm({ ...form, [key]: e.target.value })}
      errors={[...(key === 'name' ? local : []), ...errorsAt(details, key)]} autoComplete="off" hint={hint}
    />
  );
  return (
    <form className="inline-form" onSubmit={(e) => void submit(e)} noValidate aria-label={existing ? `Edit ${existing.name}` : 'New SIP credentials'}>
      <h3>{existing ? `Edit ${existing.name}` : 'New credentials'}</h3>
      <div className="grid3">
        {field('name', 'Credentials name')}
        {field('hostname', 'Registrar host')}
        {field('port', 'Port', 'number')}
        <SelectField label="Transport" value={form.transport} onChange={(e) => setForm({ ...form, transport: e.target.value as Transport })} errors={errorsAt(details, 'transport')}>
          <option value="udp">udp</option><option value="tcp">tcp</option><option value="tls">tls</option>
        </SelectField>
        {field('username', 'User name')}
        {field('password', 'Password', 'password', existing ? 'Leave empty to keep the stored password' : undefined)}
        {field('maxAgentTasks', 'Max agent tasks', 'number')}
      </div>
      <div className="row">
        <button type="submit" className="primary">{existing ? 'Save' : 'Add credentials'}</button>
        {onCancel && <button type="button" onClick={onCancel}>Cancel</button>}
      </div>
      <ErrorBox error={error} claimed={FIELDS} />
    </form>
  );
}
