import { useState } from 'react';
import { Link } from 'react-router';
import { inOrganization } from '../api/client';
import type { Delivery } from '../api/types';
import { ErrorBox, SelectField, Status } from '../components/form';
import { Badge, Pager, Table, when } from '../components/Table';
import { useLoad, useTitle } from '../hooks';
import { useCan, useScope, useSession } from '../session';

type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** The webhook delivery log of the organization, with redeliver. */
export default function Deliveries() {
  useTitle('Webhook deliveries');
  const { api } = useSession();
  const scope = useScope();
  const [status, setStatus] = useState<DeliveryStatus | ''>('');
  const [page, setPage] = useState(0);
  const list = useLoad(
    () => inOrganization(api, scope).listWebhookDeliveries({ query: { page, ...(status ? { status } : {}) } }),
    [api, scope, status, page],
  );
  return (
    <>
      <h1>Webhook deliveries</h1>
      <div className="filters">
        <SelectField label="Status" value={status} onChange={(e) => { setStatus(e.target.value as DeliveryStatus | ''); setPage(0); }}>
          <option value="">All</option>
          <option value="pending">pending</option>
          <option value="delivered">delivered</option>
          <option value="failed">failed</option>
        </SelectField>
        <button type="button" onClick={list.reload}>Refresh</button>
      </div>
      <ErrorBox error={list.error} />
      {list.data && (list.data.data.length === 0 ? <Status>No deliveries.</Status> : (
        <>
          <DeliveryTable deliveries={list.data.data} onChange={list.reload} />
          <Pager page={page} totalPages={list.data.totalPages} onPage={setPage} />
        </>
      ))}
    </>
  );
}

/** Deliveries with their last answer and a redeliver button (shared with the call page). */
export function DeliveryTable({ deliveries, onChange }: { deliveries: Delivery[]; onChange: () => void }) {
  const { api } = useSession();
  const scope = useScope();
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState('');
  const writable = useCan()('calls:write');
  const redeliver = async (id: string) => {
    setError(null);
    setDone('');
    try {
      await inOrganization(api, scope).redeliverWebhookDelivery({ path: { deliveryId: id } });
      setDone(`Redelivery of ${id} queued.`);
      onChange();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <>
      <Table caption="Webhook deliveries" head={['Event', 'Status', 'Attempts', 'Last answer', 'Created', 'Action']}>
        {deliveries.map((d) => {
          return (
            <tr key={d.id}>
              <td>{d.eventType}{d.callId && <> · <Link to={`/calls/${d.callId}`}>call</Link></>}</td>
              <td><Badge value={d.status} /></td>
              <td>{d.attemptCount}</td>
              <td>{d.lastStatusCode ?? d.lastError ?? '—'}{d.lastLatencyMs !== null ? ` (${d.lastLatencyMs} ms)` : ''}</td>
              <td>{when(d.createdAt)}</td>
              <td><button type="button" disabled={d.inFlight || !writable} onClick={() => void redeliver(d.id)} aria-label={`Redeliver ${d.eventType} ${d.id}`}>Redeliver</button></td>
            </tr>
          );
        })}
      </Table>
      {done && <p role="status">{done}</p>}
      <ErrorBox error={error} />
    </>
  );
}
