import { useState, type FormEvent } from 'react';
import { inOrganization } from '../api/client';
import { bodySchema, schemaAt, useDocument } from '../api/document';
import type { ProviderCredential, ProviderName } from '../api/types';
import { detailsOf, ErrorBox, errorsAt, SelectField, Status, TextField } from '../components/form';
import { Table, when } from '../components/Table';
import { useLoad, useTitle } from '../hooks';
import { useCan, useScope, useSession } from '../session';

/** Where the document says what a credential's body takes (its provider enum is the provider registry's). */
const CREATE_PATH = '/api/v1/vendors/{vendorId}/organizations/{organizationId}/provider-credentials';
/** A credential reads back its key as this; sent back, the API keeps the stored key. */
const MASK = '********';

/** The organization's keys for speech providers and Twilio: write-only keys, shown masked. */
export default function Providers() {
  useTitle('Provider credentials');
  const { api } = useSession();
  const scope = useScope();
  const writable = useCan()('providers:write');
  const list = useLoad(async () => (await inOrganization(api, scope).listProviderCredentials({ query: { size: 100 } })).data, [api, scope]);
  // The providers the service takes credentials for, read off its OpenAPI document.
  const doc = useDocument();
  const providers = (schemaAt(doc.data ? bodySchema(doc.data, CREATE_PATH, 'post') : undefined, ['provider'])?.enum ?? []) as ProviderName[];
  const taken = new Set((list.data ?? []).map((c) => c.provider));
  return (
    <>
      <h1>Provider credentials</h1>
      <p className="note">
        Keys this organization&apos;s calls use for their LLM and speech (and Twilio&apos;s auth token). Keys are write-only: they are
        never shown again. Without a credential, calls use the platform&apos;s key, if the operator set one.
      </p>
      <section className="card" aria-labelledby="stored">
        <h2 id="stored">Stored</h2>
        <ErrorBox error={list.error} />
        {list.data && (list.data.length === 0 ? <Status>No provider credentials yet.</Status> : (
          <Table caption="Provider credentials" head={['Provider', 'Key', 'Base URL', 'Changed', '']}>
            {list.data.map((c) => <CredentialRow key={c.id} credential={c} writable={writable} onChanged={list.reload} />)}
          </Table>
        ))}
        <ErrorBox error={doc.error} />
        {writable && taken.size < providers.length && <CredentialForm key={taken.size} providers={providers.filter((p) => !taken.has(p))} onSaved={list.reload} />}
      </section>
    </>
  );
}

function CredentialRow({ credential: c, writable, onChanged }: { credential: ProviderCredential; writable: boolean; onChanged: () => void }) {
  const { api } = useSession();
  const scope = useScope();
  const [mode, setMode] = useState<'view' | 'replace' | 'delete'>('view');
  const [error, setError] = useState<unknown>(null);
  const remove = async () => {
    setError(null);
    try {
      await inOrganization(api, scope).deleteProviderCredential({ path: { providerCredentialId: c.id } });
      onChanged();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <tr>
      <td>{c.provider}{c.accountSid && <><br /><code>{c.accountSid}</code></>}</td>
      <td>{c.apiKey ? <code>{c.apiKey}</code> : <span className="note">none</span>}</td>
      <td>{c.baseUrl ? <code>{c.baseUrl}</code> : <span className="note">default</span>}</td>
      <td>{when(c.updatedAt)}</td>
      <td>
        {writable && mode === 'view' && (
          <div className="row">
            <button type="button" onClick={() => setMode('replace')} aria-label={`Replace ${c.provider}`}>Replace</button>
            <button type="button" className="danger" onClick={() => setMode('delete')} aria-label={`Delete ${c.provider}`}>Delete</button>
          </div>
        )}
        {mode === 'delete' && (
          <div className="row" role="group" aria-label={`Delete ${c.provider}?`}>
            <button type="button" className="danger" onClick={() => void remove()}>Delete {c.provider} for good</button>
            <button type="button" onClick={() => setMode('view')}>Keep it</button>
          </div>
        )}
        {mode === 'replace' && <CredentialForm existing={c} providers={[c.provider]} onSaved={() => { setMode('view'); onChanged(); }} onCancel={() => setMode('view')} />}
        <ErrorBox error={error} />
      </td>
    </tr>
  );
}

interface FormProps {
  providers: readonly ProviderName[];
  existing?: ProviderCredential;
  onSaved: () => void;
  onCancel?: () => void;
}

/** Adds a credential, or replaces one: an empty key keeps the stored one (the API asks for it again when the base URL changes). */
function CredentialForm({ providers, existing, onSaved, onCancel }: FormProps) {
  const { api } = useSession();
  const scope = useScope();
  const [form, setForm] = useState({
    provider: existing?.provider ?? providers[0] ?? ('' as ProviderName), apiKey: '', baseUrl: existing?.baseUrl ?? '', accountSid: existing?.accountSid ?? '',
  });
  const [error, setError] = useState<unknown>(null);
  const details = detailsOf(error);
  const twilio = form.provider === 'twilio';
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    const common = { provider: form.provider, baseUrl: twilio || !form.baseUrl ? null : form.baseUrl, accountSid: twilio && form.accountSid ? form.accountSid : null };
    try {
      if (existing) {
        await inOrganization(api, scope).updateProviderCredential({ path: { providerCredentialId: existing.id }, body: { ...common, apiKey: form.apiKey || MASK } });
      } else {
        // Servers that take no key (openai_compatible) are stored without one.
        await inOrganization(api, scope).createProviderCredential({ body: { ...common, ...(form.apiKey ? { apiKey: form.apiKey } : {}) } });
      }
      onSaved();
    } catch (e) {
      setError(e);
    }
  };
  const name = existing ? `Replace ${existing.provider} credential` : 'New provider credential';
  return (
    <form className="inline-form" onSubmit={(e) => void submit(e)} noValidate aria-label={name}>
      <h3>{existing ? `Replace ${existing.provider}` : 'Add a credential'}</h3>
      <div className="grid3">
        {!existing && (
          <SelectField label="Provider" value={form.provider} onChange={(e) => setForm({ ...form, provider: e.target.value as ProviderName })} errors={errorsAt(details, 'provider')}>
            {providers.map((p) => <option key={p} value={p}>{p}</option>)}
          </SelectField>
        )}
        <TextField
          label={twilio ? 'Auth token' : 'API key'} type="password" autoComplete="off" value={form.apiKey}
          onChange={(e) => setForm({ ...form, apiKey: e.target.value })} errors={errorsAt(details, 'apiKey')}
          hint={existing ? 'Leave empty to keep the stored key (needed again if the base URL changes)' : undefined}
        />
        {twilio
          ? <TextField label="Account SID" value={form.accountSid} onChange={(e) => setForm({ ...form, accountSid: e.target.value })} errors={errorsAt(details, 'accountSid')} />
          : (
            <TextField
              label="Base URL" type="url" value={form.baseUrl} placeholder="the provider's public API" onChange={(e) => setForm({ ...form, baseUrl: e.target.value })}
              errors={errorsAt(details, 'baseUrl')} hint="Optional: a regional endpoint, a proxy or a self-hosted server"
            />
          )}
      </div>
      <div className="row">
        <button type="submit" className="primary">{existing ? 'Save' : 'Add credential'}</button>
        {onCancel && <button type="button" onClick={onCancel}>Cancel</button>}
      </div>
      <ErrorBox error={error} claimed={['provider', 'apiKey', 'baseUrl', 'accountSid']} />
    </form>
  );
}
