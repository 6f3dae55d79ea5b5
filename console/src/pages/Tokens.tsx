import { useState, type FormEvent } from 'react';
import { allItems } from '../api/pages';
import { bodySchema, schemaAt, useDocument } from '../api/document';
import type { ApiToken } from '../api/types';
import { detailsOf, ErrorBox, errorsAt, nameProblem, SelectField, Status, TextField } from '../components/form';
import { Pager, Table, when } from '../components/Table';
import { useLoad, useTitle } from '../hooks';
import { useCan, useSession, useVendorId, type Permission } from '../session';
import { NewSecret } from '../tokens/NewSecret';

/** Where the document says what a token's body takes (the roles and permissions are the service's). */
const CREATE_PATH = '/api/v1/vendors/{vendorId}/api-tokens';
const SIZE = 50;

/**
 * What a role grants, as the API defines it (the role's description in the document says the
 * same): viewer every `:read`, editor all but organizations and tokens write, admin all. The
 * form offers only roles the signed-in token holds in full: the API refuses the others.
 */
function roleGrants(role: string, all: readonly string[]): string[] {
  if (role === 'viewer') return all.filter((p) => p.endsWith(':read'));
  if (role === 'editor') return all.filter((p) => p !== 'organizations:write' && p !== 'tokens:write');
  return [...all];
}

/** The vendor's API tokens (an organization token sees its organization's): list, create with a role and expiry, revoke. */
export default function Tokens() {
  useTitle('API tokens');
  // A deep link followed by a token that may not read tokens: said, and nothing requested.
  if (!useCan()('tokens:read')) return <><h1>API tokens</h1><Status>This token may not read API tokens (no tokens:read).</Status></>;
  return <TokenPage />;
}

function TokenPage() {
  const { api, me } = useSession();
  const vendorId = useVendorId();
  const can = useCan();
  const writable = can('tokens:write');
  const [page, setPage] = useState(0);
  const list = useLoad(async () => api.vendor(vendorId).listApiTokens({ query: { page, size: SIZE, sort: 'createdAt,desc' } }), [api, vendorId, page]);
  // Names for the scope column, when the token may list organizations.
  const mayList = can('organizations:read');
  const orgs = useLoad(async () => {
    if (!mayList) return [];
    if (me.organizationId) return [await api.getOrganization({ path: { vendorId, organizationId: me.organizationId } })];
    return allItems((p, size) => api.listOrganizations({ path: { vendorId }, query: { page: p, size } }));
  }, [api, vendorId, me.organizationId, mayList]);
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  const nameOf = (id: string | null) => (id === null ? 'whole vendor' : orgs.data?.find((o) => o.id === id)?.name ?? id);
  return (
    <>
      <h1>API tokens</h1>
      <p className="note">
        Tokens let scripts and people use the API (and this console). A token can do only what its role allows, in its
        vendor or in one organization, and can make tokens with no more than it holds itself.
      </p>
      {created && <NewSecret {...created} onDone={() => setCreated(null)} />}
      <section className="card" aria-labelledby="tokens">
        <h2 id="tokens">Tokens</h2>
        <ErrorBox error={list.error} />
        {list.data && (list.data.data.length === 0 ? <Status>No API tokens yet.</Status> : (
          <Table caption="API tokens" head={['Name', 'Starts with', 'Scope', 'Role', 'Created', 'Expires', 'State', ...(writable ? ['Change'] : [])]}>
            {list.data.data.map((t) => (
              <TokenRow key={t.id} token={t} scopeName={nameOf(t.organizationId)} yours={t.id === me.tokenId} writable={writable} onRevoked={list.reload} />
            ))}
          </Table>
        ))}
        {list.data && <Pager page={page} totalPages={list.data.totalPages} onPage={setPage} />}
        {writable && (
          <TokenForm
            organizations={orgs.data ?? []}
            onCreated={(token) => { setCreated(token); if (page === 0) list.reload(); else setPage(0); }}
          />
        )}
      </section>
    </>
  );
}

function state(t: ApiToken): { text: string; className: string } {
  if (t.revokedAt) return { text: `Revoked ${when(t.revokedAt)}`, className: 'bad' };
  if (t.expiresAt && Date.parse(t.expiresAt) <= Date.now()) return { text: 'Expired', className: 'bad' };
  return { text: 'Active', className: 'good' };
}

interface RowProps { token: ApiToken; scopeName: string; yours: boolean; writable: boolean; onRevoked: () => void }

function TokenRow({ token: t, scopeName, yours, writable, onRevoked }: RowProps) {
  const { api } = useSession();
  const [asking, setAsking] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const revoke = async () => {
    setError(null);
    try {
      await api.vendor(t.vendorId).deleteApiToken({ path: { tokenId: t.id } });
      setAsking(false);
      onRevoked();
    } catch (e) {
      setError(e);
    }
  };
  const { text, className } = state(t);
  return (
    <tr>
      <td>{t.name}{yours && <><br /><span className="note">the token you are signed in with</span></>}</td>
      <td><code>{t.prefix}</code></td>
      <td>{scopeName}</td>
      <td>{t.role ?? `${t.permissions.length} permissions`}</td>
      <td>{when(t.createdAt)}</td>
      <td>{t.expiresAt ? when(t.expiresAt) : 'never'}</td>
      <td className={className}>{text}</td>
      {writable && <td>
        {!t.revokedAt && !asking && (
          <button type="button" className="danger" onClick={() => setAsking(true)} aria-label={`Revoke ${t.name}`}>Revoke</button>
        )}
        {asking && (
          <div role="group" aria-label={`Revoke ${t.name}?`}>
            <p>It stops working at once, and so does every token it made.{yours && ' You will be signed out.'}</p>
            <div className="row">
              <button type="button" className="danger" onClick={() => void revoke()}>Revoke {t.name} now</button>
              <button type="button" onClick={() => setAsking(false)}>Keep it</button>
            </div>
          </div>
        )}
        <ErrorBox error={error} />
      </td>}
    </tr>
  );
}

interface FormProps { organizations: readonly { id: string; name: string }[]; onCreated: (token: { name: string; token: string }) => void }

/** A new token: name, role, scope and an optional expiry. The API's refusals are shown at their field. */
function TokenForm({ organizations, onCreated }: FormProps) {
  const { api, me, scope } = useSession();
  const vendorId = useVendorId();
  const doc = useDocument();
  const body = doc.data ? bodySchema(doc.data, CREATE_PATH, 'post') : undefined;
  const roles = (schemaAt(body, ['role'])?.enum ?? []) as string[];
  const all = (schemaAt(body, ['permissions'])?.items?.enum ?? []) as string[];
  const held = new Set<string>(me.permissions);
  // The signed-in token's own expiry, when it has one: the latest a token it makes may expire.
  const own = useLoad(async () => (me.tokenId ? api.vendor(vendorId).getApiToken({ path: { tokenId: me.tokenId } }) : null), [api, vendorId, me.tokenId]);
  const limit = own.data?.expiresAt ?? null;
  const grantable = (role: string) => all.length > 0 && roleGrants(role, all).every((p) => held.has(p as Permission));
  const blank = { name: '', role: 'viewer', organizationId: me.organizationId ? '' : scope?.organizationId ?? '', expiresAt: '' };
  const [form, setForm] = useState(blank);
  const [error, setError] = useState<unknown>(null);
  const [local, setLocal] = useState<string[]>([]);
  const details = detailsOf(error);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setLocal(nameProblem(form.name));
    if (nameProblem(form.name).length) return;
    try {
      const made = await api.vendor(vendorId).createApiToken({
        body: {
          name: form.name.trim(),
          role: form.role as 'viewer',
          ...(form.organizationId ? { organizationId: form.organizationId } : {}),
          // datetime-local is the browser's local time; the API takes an instant.
          ...(form.expiresAt ? { expiresAt: new Date(form.expiresAt).toISOString() } : {}),
        },
      });
      setForm(blank);
      onCreated({ name: made.name, token: made.token });
    } catch (e) {
      setError(e);
    }
  };
  return (
    <form className="inline-form" onSubmit={(e) => void submit(e)} noValidate aria-label="New API token">
      <h3>New token</h3>
      <div className="grid3">
        <TextField label="Token name" value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} errors={[...local, ...errorsAt(details, 'name')]} autoComplete="off" />
        <SelectField label="Role" value={form.role} onChange={(e) => setForm({ ...form, role: e.target.value })} errors={[...errorsAt(details, 'role'), ...errorsAt(details, 'permissions')]}
          hint="viewer reads everything; editor changes all but organizations and tokens; admin does all">
          {roles.map((r) => <option key={r} value={r} disabled={!grantable(r)}>{grantable(r) ? r : `${r} (more than this token holds)`}</option>)}
        </SelectField>
        {me.organizationId
          ? <p className="note">Narrowed to this token&apos;s organization, as every token it makes.</p>
          : (
            <SelectField label="Scope" value={form.organizationId} onChange={(e) => setForm({ ...form, organizationId: e.target.value })} errors={errorsAt(details, 'organizationId')}>
              <option value="">The whole vendor</option>
              {scope?.organizationId && !organizations.some((o) => o.id === scope.organizationId) && <option value={scope.organizationId}>Only {scope.organizationId}</option>}
              {organizations.map((o) => <option key={o.id} value={o.id}>Only {o.name}</option>)}
            </SelectField>
          )}
        <TextField
          label="Expires" type="datetime-local" value={form.expiresAt} onChange={(e) => setForm({ ...form, expiresAt: e.target.value })} errors={errorsAt(details, 'expiresAt')}
          hint={limit
            ? `Required: your token expires ${when(limit)}, and a token never outlives the token that makes it. Your local time.`
            : 'Optional; your local time. Empty: it does not expire.'}
        />
      </div>
      <button type="submit" className="primary">Create token</button>
      <ErrorBox error={doc.error} />
      <ErrorBox error={error} claimed={['name', 'role', 'permissions', 'organizationId', 'expiresAt']} />
    </form>
  );
}
