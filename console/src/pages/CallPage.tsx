import { Link, useParams } from 'react-router';
import { data } from '../api/client';
import { fetchCallDeliveries, type CallTurn } from '../api/coming';
import { useApiHas } from '../api/document';
import type { Call, Delivery } from '../api/types';
import { ErrorBox, Status } from '../components/form';
import { Badge, when } from '../components/Table';
import { useLoad, useTitle } from '../hooks';
import { useScope, useSession } from '../session';
import { DeliveryTable } from './Deliveries';

type Item =
  | { kind: 'say'; at: string; role: string; text: string }
  | { kind: 'tool'; at: string; tool: Call['toolInvocations'][number] };

const DELIVERIES = '/api/v1/vendors/{vendorId}/organizations/{organizationId}/webhook-deliveries';

/** One call: what was said and which tools ran when (with latencies), how it ended, and its webhooks. */
export default function CallPage() {
  const { id = '' } = useParams();
  useTitle('Call');
  const { api, token } = useSession();
  const scope = useScope();
  const call = useLoad(() => data(api.GET('/api/v1/vendors/{vendorId}/organizations/{organizationId}/calls/{callId}', { params: { path: { ...scope, callId: id } } })), [api, scope, id]);
  // Coming API: the delivery list filtered by callId (see api/coming.ts).
  const hasCallFilter = useApiHas(DELIVERIES, 'get', 'callId');
  const deliveries = useLoad(async () => (hasCallFilter ? fetchCallDeliveries<Delivery>(token, scope, id) : null), [token, scope, id, hasCallFilter]);

  if (call.error) return <ErrorBox error={call.error} />;
  if (!call.data) return <Status>Loading…</Status>;
  const c = call.data;
  const items: Item[] = [
    ...c.transcript.map((t): Item => ({ kind: 'say', at: t.at, role: t.role, text: t.text })),
    ...c.toolInvocations.map((tool): Item => ({ kind: 'tool', at: tool.at, tool })),
  ].sort((a, b) => a.at.localeCompare(b.at));
  const start = Date.parse(c.startedAt ?? c.createdAt);
  const offset = (at: string) => `${((Date.parse(at) - start) / 1000).toFixed(1)} s`;
  // Coming API: call records gain `turns` (latency from the end of the user's turn to the first answer).
  const turns = (c as Call & { turns?: CallTurn[] }).turns;

  return (
    <>
      <h1>Call {c.id.slice(0, 8)}</h1>
      <section className="card" aria-labelledby="facts">
        <h2 id="facts">Summary</h2>
        <dl className="facts">
          <dt>With</dt><dd><Link to={`/${c.kind === 'agent' ? 'agents' : 'assistants'}/${c.assistantId ?? c.agentId ?? ''}`}>{c.kind}</Link></dd>
          <dt>Status</dt><dd><Badge value={c.status} /></dd>
          <dt>Transport</dt><dd>{c.transport.type}</dd>
          <dt>Started</dt><dd>{when(c.startedAt)}</dd>
          <dt>Ended</dt><dd>{when(c.endedAt)}{c.endReason ? ` (${c.endReason})` : ''}</dd>
          <dt>Outcome</dt><dd>{c.conclusion ? <Badge value={c.conclusion.outcome} /> : '—'}</dd>
          {c.conclusion?.summary && <><dt>Summary</dt><dd>{c.conclusion.summary}</dd></>}
        </dl>
      </section>
      <section className="card" aria-labelledby="timeline">
        <h2 id="timeline">Timeline</h2>
        {items.length === 0 ? <Status>Nothing was said.</Status> : (
          <ol className="timeline">
            {items.map((item, i) => (
              <li key={i} className={item.kind === 'say' ? `t-${item.role}` : 't-tool_result'}>
                <span className="t-at">{offset(item.at)}</span>
                {item.kind === 'say'
                  ? <span><strong>{item.role === 'user' ? 'Caller' : 'Assistant'}:</strong> {item.text}</span>
                  : (
                    <span>
                      <strong>Tool</strong> <code>{item.tool.name}</code> <code>{JSON.stringify(item.tool.arguments)}</code>{' '}
                      <span className={item.tool.ok ? 'good' : 'bad'}>{item.tool.outcome}</span> {item.tool.statusCode ?? 'no answer'}
                      <span className="latency" style={{ inlineSize: `${Math.min(100, item.tool.latencyMs / 20)}%` }} aria-hidden="true" /> {item.tool.latencyMs} ms
                    </span>
                  )}
              </li>
            ))}
          </ol>
        )}
      </section>
      <section className="card" aria-labelledby="turns">
        <h2 id="turns">Turn latency</h2>
        {turns
          ? <ol className="turns">{turns.map((t) => <li key={t.index}>Turn {t.index + 1}: {t.latencyMs} ms</li>)}</ol>
          : <p className="note">Turn latencies are not recorded by this server yet.</p>}
      </section>
      <section className="card" aria-labelledby="hooks">
        <h2 id="hooks">Webhook deliveries</h2>
        {hasCallFilter === false && <p className="note">This server cannot list a call's deliveries yet; see <Link to="/deliveries">all deliveries</Link>.</p>}
        <ErrorBox error={deliveries.error} />
        {deliveries.data && (deliveries.data.length === 0 ? <Status>No deliveries for this call.</Status> : <DeliveryTable deliveries={deliveries.data} onChange={deliveries.reload} />)}
      </section>
    </>
  );
}
