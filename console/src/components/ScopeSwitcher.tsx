import { useId, useState, type FormEvent } from 'react';
import { allItems } from '../api/pages';
import { useLoad } from '../hooks';
import { useCan, useSession } from '../session';

const UUID = /^[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}$/i;

/**
 * Vendor and organization: the platform admin picks both, a vendor token the organization, an
 * organization token nothing. A chosen vendor without an organization yet has organizationId ''.
 * The lists are read page by page, so every vendor and organization is offered; a vendor token
 * that may not list organizations (no organizations:read) types the organization's id instead.
 */
export function ScopeSwitcher() {
  const { api, me, scope, setScope, organizationsVersion } = useSession();
  const can = useCan();
  const vendorSelect = useId();
  const orgSelect = useId();
  const isAdmin = me.kind === 'admin';
  const vendorId = me.vendorId ?? scope?.vendorId ?? '';
  const mayList = can('organizations:read');
  const vendors = useLoad(async () => (isAdmin
    ? allItems((page, size) => api.listVendors({ query: { page, size } }))
    : []), [api, isAdmin]);
  const orgs = useLoad(async () => {
    if (me.organizationId) {
      // An organization token's own organization, by name when the token may read it.
      if (!mayList) return [{ id: me.organizationId, name: me.organizationId }];
      return [await api.getOrganization({ path: { vendorId, organizationId: me.organizationId } })];
    }
    if (!vendorId || !mayList) return [];
    return allItems((page, size) => api.listOrganizations({ path: { vendorId }, query: { page, size } }));
  }, [api, vendorId, me.organizationId, mayList, organizationsVersion]);

  return (
    <div className="scope">
      {isAdmin && (
        <>
          <label htmlFor={vendorSelect}>Vendor</label>
          <select id={vendorSelect} value={scope?.vendorId ?? ''} onChange={(e) => setScope(e.target.value ? { vendorId: e.target.value, organizationId: '' } : null)}>
            <option value="">Choose…</option>
            {(vendors.data ?? []).map((v) => <option key={v.id} value={v.id}>{v.name}</option>)}
          </select>
        </>
      )}
      {mayList || me.organizationId
        ? (
          <>
            <label htmlFor={orgSelect}>Organization</label>
            <select
              id={orgSelect}
              value={scope?.organizationId ?? ''}
              disabled={!vendorId || Boolean(me.organizationId)}
              onChange={(e) => setScope(e.target.value ? { vendorId, organizationId: e.target.value } : null)}
            >
              <option value="">Choose…</option>
              {(orgs.data ?? []).map((o) => <option key={o.id} value={o.id}>{o.name}</option>)}
            </select>
          </>
        )
        : vendorId && <OrganizationById current={scope?.organizationId ?? ''} onChoose={(organizationId) => setScope({ vendorId, organizationId })} />}
    </div>
  );
}

/** For a token that may not list organizations: the id is typed (the pages then say whether the token may use it). */
function OrganizationById({ current, onChoose }: { current: string; onChoose: (organizationId: string) => void }) {
  const input = useId();
  const [value, setValue] = useState(current);
  const [wrong, setWrong] = useState(false);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const id = value.trim();
    setWrong(!UUID.test(id));
    if (UUID.test(id)) onChoose(id);
  };
  return (
    <form className="scope-by-id" onSubmit={submit} aria-label="Choose an organization by id">
      <label htmlFor={input}>Organization id</label>
      <input
        id={input} value={value} onChange={(e) => setValue(e.target.value)} size={38} spellCheck={false} autoComplete="off"
        aria-invalid={wrong} aria-describedby={`${input}-why`}
      />
      <button type="submit">Use</button>
      <small id={`${input}-why`} className={wrong ? 'field-error' : 'hint'}>
        {wrong ? 'An organization id is a UUID.' : 'This token may not list organizations (no organizations:read): type the id.'}
      </small>
    </form>
  );
}
