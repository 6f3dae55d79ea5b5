import { useState, type FormEvent } from 'react';
import { allItems } from '../api/pages';
import type { Organization } from '../api/types';
import { detailsOf, ErrorBox, errorsAt, nameProblem, Status, TextField } from '../components/form';
import { Table, when } from '../components/Table';
import { useLoad, useTitle } from '../hooks';
import { useCan, useSession, useVendorId } from '../session';

/**
 * The vendor's organizations: create and rename for tokens with organizations:write. An
 * organization token sees (and may rename) its own only, and creates none (the API's rule).
 */
export default function Organizations() {
  useTitle('Organizations');
  // A deep link followed by a token that may not read organizations: said, and nothing requested.
  if (!useCan()('organizations:read')) return <><h1>Organizations</h1><Status>This token may not read organizations (no organizations:read).</Status></>;
  return <OrganizationList />;
}

function OrganizationList() {
  const { api, me, organizationsVersion, organizationsChanged } = useSession();
  const vendorId = useVendorId();
  const writable = useCan()('organizations:write');
  const list = useLoad(async () => (me.organizationId
    ? [await api.getOrganization({ path: { vendorId, organizationId: me.organizationId } })]
    : allItems((page, size) => api.listOrganizations({ path: { vendorId }, query: { page, size } }))), [api, vendorId, me.organizationId, organizationsVersion]);
  return (
    <>
      <h1>Organizations</h1>
      <p className="note">
        An organization holds assistants, agents, numbers and calls; API tokens may be narrowed to one. The picker at the top
        chooses the one the other pages work in.
      </p>
      <section className="card" aria-labelledby="organizations">
        <h2 id="organizations">{me.organizationId ? 'This token\u2019s organization' : 'Organizations of this vendor'}</h2>
        <ErrorBox error={list.error} />
        {list.data && (list.data.length === 0 ? <Status>No organizations yet.</Status> : (
          <Table caption="Organizations" head={['Name', 'Id', 'Created', writable ? 'Change' : '']}>
            {list.data.map((o) => <OrganizationRow key={o.id} organization={o} writable={writable} onRenamed={organizationsChanged} />)}
          </Table>
        ))}
        {writable && !me.organizationId && <NewOrganization onCreated={organizationsChanged} />}
      </section>
    </>
  );
}

function OrganizationRow({ organization: o, writable, onRenamed }: { organization: Organization; writable: boolean; onRenamed: () => void }) {
  const [renaming, setRenaming] = useState(false);
  return (
    <tr>
      <td>{o.name}</td>
      <td><code>{o.id}</code></td>
      <td>{when(o.createdAt)}</td>
      <td>
        {writable && !renaming && <button type="button" onClick={() => setRenaming(true)} aria-label={`Rename ${o.name}`}>Rename</button>}
        {renaming && <NameForm organization={o} onDone={(changed) => { setRenaming(false); if (changed) onRenamed(); }} />}
      </td>
    </tr>
  );
}

/** Renames an organization (PUT: its name is all an organization has to write). */
function NameForm({ organization: o, onDone }: { organization: Organization; onDone: (changed: boolean) => void }) {
  const { api } = useSession();
  const [name, setName] = useState(o.name);
  const [error, setError] = useState<unknown>(null);
  const [local, setLocal] = useState<string[]>([]);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setLocal(nameProblem(name));
    if (nameProblem(name).length) return;
    try {
      await api.updateOrganization({ path: { vendorId: o.vendorId, organizationId: o.id }, body: { name: name.trim() } });
      onDone(true);
    } catch (e) {
      setError(e);
    }
  };
  return (
    <form className="inline-form" onSubmit={(e) => void submit(e)} noValidate aria-label={`Rename ${o.name}`}>
      <TextField label="New name" value={name} onChange={(e) => setName(e.target.value)} errors={[...local, ...errorsAt(detailsOf(error), 'name')]} autoComplete="off" />
      <div className="row">
        <button type="submit" className="primary">Save name</button>
        <button type="button" onClick={() => onDone(false)}>Cancel</button>
      </div>
      <ErrorBox error={error} claimed={['name']} />
    </form>
  );
}

function NewOrganization({ onCreated }: { onCreated: () => void }) {
  const { api, organizationsVersion } = useSession();
  const vendorId = useVendorId();
  const [name, setName] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [local, setLocal] = useState<string[]>([]);
  // Said until the list changes again (a rename, say): then it is no longer the latest news.
  const [created, setCreated] = useState<{ name: string; version: number } | null>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setCreated(null);
    setLocal(nameProblem(name));
    if (nameProblem(name).length) return;
    try {
      const organization = await api.createOrganization({ path: { vendorId }, body: { name: name.trim() } });
      setName('');
      setCreated({ name: organization.name, version: organizationsVersion + 1 });
      onCreated();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <form className="inline-form" onSubmit={(e) => void submit(e)} noValidate aria-label="New organization">
      <h3>New organization</h3>
      <TextField label="Organization name" value={name} onChange={(e) => setName(e.target.value)} errors={[...local, ...errorsAt(detailsOf(error), 'name')]} autoComplete="off" />
      <button type="submit" className="primary">Create organization</button>
      {created?.version === organizationsVersion && <Status>Created {created.name}: choose it in the picker at the top to work in it.</Status>}
      <ErrorBox error={error} claimed={['name']} />
    </form>
  );
}
