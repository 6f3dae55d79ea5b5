import { useState, type FormEvent } from 'react';
import { inOrganization } from '../api/client';
import type { SipCredential, Validation } from '../api/types';
import { detailsOf, ErrorBox, errorsAt, SelectField, Status, TextField } from '../components/form';
import { Table, when } from '../components/Table';
import { useLoad, useTitle } from '../hooks';
import { useCan, useScope, useSession } from '../session';


/** SIP credentials (with a Validate button that shows the registrar's answer) and the numbers they carry. */
export default function Sip() {
  useTitle('SIP');
  const { api } = useSession();
  const scope = useScope();
  const credentials = useLoad(async () => (await inOrganization(api, scope).listSipCredentials({ query: { size: 100 } })).data, [api, scope]);
  const writable = useCan()('sip:write');
  const numbers = useLoad(async () => (await inOrganization(api, scope).listSipNumbers({ query: { size: 100 } })).data, [api, scope]);
  return (
    <>
      <h1>SIP</h1>
      <section className="card" aria-labelledby="credentials">
        <h2 id="credentials">Credentials</h2>
        <ErrorBox error={credentials.error} />
        {credentials.data && (credentials.data.length === 0 ? <Status>No SIP credentials yet.</Status> : (
          <Table caption="SIP credentials" head={['Name', 'Registrar', 'User', 'Max tasks', 'Check']}>
            {credentials.data.map((c) => <CredentialRow key={c.id} credential={c} canValidate={writable} />)}
          </Table>
        ))}
        {writable && <NewCredential onCreated={credentials.reload} />}
      </section>
      <section className="card" aria-labelledby="numbers">
        <h2 id="numbers">Numbers</h2>
        <ErrorBox error={numbers.error} />
        {numbers.data && (numbers.data.length === 0 ? <Status>No SIP numbers yet.</Status> : (
          <Table caption="SIP numbers" head={['Number', 'Name', 'Credentials', 'Changed']}>
            {numbers.data.map((n) => (
              <tr key={n.id}>
                <td>{n.number}</td>
                <td>{n.name}</td>
                <td>{credentials.data?.find((c) => c.id === n.sipCredentialId)?.name ?? n.sipCredentialId}</td>
                <td>{when(n.updatedAt)}</td>
              </tr>
            ))}
          </Table>
        ))}
        {writable && <NewNumber credentials={credentials.data ?? []} onCreated={numbers.reload} />}
      </section>
    </>
  );
}

function CredentialRow({ credential: c, canValidate }: { credential: SipCredential; canValidate: boolean }) {
  const { api } = useSession();
  const scope = useScope();
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
  return (
    <tr>
      <td>{c.name}</td>
      <td>{c.hostname}:{c.port} ({c.transport})</td>
      <td>{c.username}</td>
      <td>{c.maxAgentTasks}</td>
      <td>
        <button type="button" onClick={() => void validate()} disabled={busy || !canValidate} aria-label={`Validate ${c.name}`}>{busy ? 'Registering…' : 'Validate'}</button>
        {result && (
          <span role="status" className={result.successful ? 'good' : 'bad'}>
            {' '}{result.successful ? 'Registered' : 'Refused'}: {result.statusCode ?? 'no answer'} {result.reason}
          </span>
        )}
        <ErrorBox error={error} />
      </td>
    </tr>
  );
}

function NewCredential({ onCreated }: { onCreated: () => void }) {
  const { api } = useSession();
  const scope = useScope();
  const blank = { name: '', hostname: '', port: '5060', transport: 'udp' as const, username: '', password: '', maxAgentTasks: '1' };
  const [form, setForm] = useState<Omit<typeof blank, 'transport'> & { transport: 'udp' | 'tcp' | 'tls' }>(blank);
  const [error, setError] = useState<unknown>(null);
  const details = detailsOf(error);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      await inOrganization(api, scope).createSipCredential({ body: { ...form, port: Number(form.port), maxAgentTasks: Number(form.maxAgentTasks) } });
      setForm(blank);
      onCreated();
    } catch (e) {
      setError(e);
    }
  };
  const field = (key: keyof typeof blank, label: string, type = 'text') => (
    <TextField label={label} type={type} value={form[key]} onChange={(e) => setForm({ ...form, [key]: e.target.value })} errors={errorsAt(details, key)} autoComplete="off" />
  );
  return (
    <form className="inline-form" onSubmit={(e) => void submit(e)} noValidate aria-label="New SIP credentials">
      <h3>New credentials</h3>
      <div className="grid3">
        {field('name', 'Credentials name')}
        {field('hostname', 'Registrar host')}
        {field('port', 'Port', 'number')}
        <SelectField label="Transport" value={form.transport} onChange={(e) => setForm({ ...form, transport: e.target.value as 'udp' })}>
          <option value="udp">udp</option><option value="tcp">tcp</option><option value="tls">tls</option>
        </SelectField>
        {field('username', 'User name')}
        {field('password', 'Password', 'password')}
        {field('maxAgentTasks', 'Max agent tasks', 'number')}
      </div>
      <button type="submit" className="primary">Add credentials</button>
      <ErrorBox error={error} claimed={Object.keys(blank)} />
    </form>
  );
}

function NewNumber({ credentials, onCreated }: { credentials: SipCredential[]; onCreated: () => void }) {
  const { api } = useSession();
  const scope = useScope();
  const [form, setForm] = useState({ number: '', name: '', sipCredentialId: '' });
  const [error, setError] = useState<unknown>(null);
  const details = detailsOf(error);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      await inOrganization(api, scope).createSipNumber({ body: { number: form.number, sipCredentialId: form.sipCredentialId, ...(form.name ? { name: form.name } : {}) } });
      setForm({ number: '', name: '', sipCredentialId: '' });
      onCreated();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <form className="inline-form" onSubmit={(e) => void submit(e)} noValidate aria-label="New SIP number">
      <h3>New number</h3>
      <div className="grid3">
        <TextField label="Number (E.164)" value={form.number} onChange={(e) => setForm({ ...form, number: e.target.value })} errors={errorsAt(details, 'number')} />
        <TextField label="Number name" value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} errors={errorsAt(details, 'name')} />
        <SelectField label="Carried by" value={form.sipCredentialId} onChange={(e) => setForm({ ...form, sipCredentialId: e.target.value })} errors={errorsAt(details, 'sipCredentialId')}>
          <option value="">Choose credentials…</option>
          {credentials.map((c) => <option key={c.id} value={c.id}>{c.name}</option>)}
        </SelectField>
      </div>
      <button type="submit" className="primary">Add number</button>
      <ErrorBox error={error} claimed={['number', 'name', 'sipCredentialId']} />
    </form>
  );
}
