import { useId } from 'react';
import { data } from '../api/client';
import { useLoad } from '../hooks';
import { useSession } from '../session';

/**
 * Vendor and organization: the platform admin picks both, a vendor token the organization, an
 * organization token nothing. A chosen vendor without an organization yet has organizationId ''.
 */
export function ScopeSwitcher() {
  const { api, me, scope, setScope } = useSession();
  const vendorSelect = useId();
  const orgSelect = useId();
  const isAdmin = me.kind === 'admin';
  const vendorId = me.vendorId ?? scope?.vendorId ?? '';
  const vendors = useLoad(async () => (isAdmin ? data(api.GET('/api/v1/vendors', { params: { query: { size: 100 } } })) : []), [api, isAdmin]);
  const orgs = useLoad(async () => {
    if (!vendorId) return [];
    if (me.organizationId) return [await data(api.GET('/api/v1/vendors/{vendorId}/organizations/{organizationId}', { params: { path: { vendorId, organizationId: me.organizationId } } }))];
    return data(api.GET('/api/v1/vendors/{vendorId}/organizations', { params: { path: { vendorId }, query: { size: 100 } } }));
  }, [api, vendorId, me.organizationId]);

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
    </div>
  );
}
