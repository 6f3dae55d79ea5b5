import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { inOrganization } from '../api/client';
import { Analysis } from '../calls/Analysis';
import { RecordingPlayer, type Seek } from '../calls/RecordingPlayer';
import type { Call } from '../api/types';
import { ErrorBox, Status } from '../components/form';
import { Badge, when } from '../components/Table';
import { useLoad, useTitle } from '../hooks';
import { useScope, useSession } from '../session';
import { DeliveryTable } from './Deliveries';

type Item =
  | { kind: 'say'; at: string; say: Call['transcript'][number] }
  | { kind: 'tool'; at: string; tool: Call['toolInvocations'][number] };

/** One call: what was said and which tools ran when (with latencies), how it ended, and its webhooks. */
export default function CallPage() {
  const { id = '' } = useParams();
  useTitle('Call');
  const { api } = useSession();
  const scope = useScope();
  const [seek, setSeek] = useState<Seek | null>(null);
  const call = useLoad(() => inOrganization(api, scope).getCall({ path: { callId: id } }), [api, scope, id]);
  const deliveries = useLoad(
    async () => (await inOrganization(api, scope).listWebhookDeliveries({ query: { callId: id, size: 100, sort: 'createdAt,asc' } })).data,
    [api, scope, id],
  );

  if (call.error) return <ErrorBox error={call.error} />;
  if (!call.data) return <Status>Loading…</Status>;
  const c = call.data;
  const items: Item[] = [
    ...c.transcript.map((say): Item => ({ kind: 'say', at: say.at, say })),
    ...c.toolInvocations.map((tool): Item => ({ kind: 'tool', at: tool.at, tool })),
  ].sort((a, b) => a.at.localeCompare(b.at));
  const start = Date.parse(c.startedAt ?? c.createdAt);
  const offset = (at: string) => `${((Date.parse(at) - start) / 1000).toFixed(1)} s`;
  const slowest = Math.max(1, ...c.turns.map((t) => t.latency?.totalMs ?? t.latencyMs));
  const source = c.kind === 'agent' ? `/agents/${c.agentId ?? ''}` : `/assistants/${c.assistantId ?? ''}`;

  return (
    <>
      <h1>Call {c.id.slice(0, 8)}</h1>
      <section className="card" aria-labelledby="facts">
        <h2 id="facts">Summary</h2>
        <dl className="facts">
          <dt>With</dt><dd><Link to={source}>{c.kind}</Link></dd>
          {c.taskId && <><dt>Task</dt><dd><Link to={`${source}/tasks`}>{c.taskId.slice(0, 8)}</Link></dd></>}
          <dt>Status</dt><dd><Badge value={c.status} /></dd>
          <dt>Transport</dt><dd>{c.transport.type}</dd>
          <dt>Started</dt><dd>{when(c.startedAt)}</dd>
          <dt>Ended</dt><dd>{when(c.endedAt)}{c.endReason ? ` (${c.endReason})` : ''}</dd>
          <dt>Outcome</dt><dd>{c.conclusion ? <Badge value={c.conclusion.outcome} /> : '—'}</dd>
          {c.answeredBy && (
            <>
              <dt>Answered by</dt>
              <dd>
                <Badge value={c.answeredBy} />
                {c.detection && <> {c.detection.action ? c.detection.action.replaceAll('_', ' ') : 'detecting'}{c.detection.decidedAfterMs !== null && `, decided after ${(c.detection.decidedAfterMs / 1000).toFixed(1)} s`}</>}
              </dd>
              {c.detection && c.detection.signals.length > 0 && (
                <>
                  <dt>Signals</dt>
                  <dd>
                    <ol className="signals" aria-label="Detection signals">
                      {c.detection.signals.map((s, i) => (
                        <li key={i}>
                          <span className="t-at">{(s.atMs / 1000).toFixed(1)} s</span> {s.signal.replaceAll('_', ' ')}
                          {s.phrase && <> “{s.phrase}”</>}
                          {s.frequencyHz !== undefined && <> {s.frequencyHz} Hz</>}
                          {s.durationMs !== undefined && <> for {s.durationMs} ms</>}
                        </li>
                      ))}
                    </ol>
                  </dd>
                </>
              )}
            </>
          )}
          {c.failure && <><dt>Failure</dt><dd className="bad">{c.failure.source}{c.failure.statusCode === null ? '' : ` ${c.failure.statusCode}`}: {c.failure.message}</dd></>}
          {Object.keys(c.userValues).length > 0 && <><dt>User values</dt><dd><code>{JSON.stringify(c.userValues)}</code></dd></>}
          {c.unfilledPlaceholders.length > 0 && <><dt>Unfilled</dt><dd className="bad">{c.unfilledPlaceholders.map((p) => `{{${p}}}`).join(', ')}</dd></>}
          {c.turnTaking && <>
            <dt>False interruptions</dt><dd>{c.turnTaking.falseInterruptions}</dd>
            <dt>Speculative answers</dt><dd>{c.turnTaking.speculativeStarts} started, {c.turnTaking.speculativeDiscards} dropped</dd>
          </>}
        </dl>
      </section>
      {c.recording && (
        <section className="card" aria-labelledby="recording">
          <h2 id="recording">Recording</h2>
          <RecordingPlayer call={c} seek={seek} />
        </section>
      )}
      {c.conclusion && <Analysis call={c} onChange={call.reload} />}
      <section className="card" aria-labelledby="timeline">
        <h2 id="timeline">Timeline</h2>
        {items.length === 0 ? <Status>Nothing was said.</Status> : (
          <ol className="timeline">
            {items.map((item, i) => (
              <li key={i} className={item.kind === 'say' ? `t-${item.say.role}` : 't-tool_result'}>
                <span className="t-at">{offset(item.at)}</span>
                {item.kind === 'say'
                  ? (
                    <span>
                      {item.say.startMs !== undefined && c.recording?.status === 'ready'
                        ? <button type="button" className="seek" title="Play from here" onClick={() => setSeek({ ms: item.say.startMs ?? 0, n: (seek?.n ?? 0) + 1 })}>
                            <strong>{item.say.role === 'user' ? 'Caller' : 'Assistant'}:</strong> {item.say.text}
                          </button>
                        : <><strong>{item.say.role === 'user' ? 'Caller' : 'Assistant'}:</strong> {item.say.text}</>}
                      {item.say.interrupted && <em className="note"> (interrupted)</em>}
                      {item.say.latencyMs !== undefined && <small className="note"> after {item.say.latencyMs} ms</small>}
                    </span>
                  )
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
        {c.turns.length === 0 ? <Status>No answered turn.</Status> : (
          <ul className="turns" aria-label="Latency of each answered turn">
            {/* index counts the caller's turns: the answer to the first thing the caller said is turn 1. */}
            {c.turns.map((t) => (
              <li key={t.index}>
                Turn {t.index}:{' '}
                {t.latency ? <LatencyParts latency={t.latency} scale={slowest} endpointing={t.endpointing} />
                  : <><span className="latency" style={{ inlineSize: `${(t.latencyMs / slowest) * 100}%` }} aria-hidden="true" /> {t.latencyMs} ms</>}
              </li>
            ))}
          </ul>
        )}
      </section>
      <section className="card" aria-labelledby="hooks">
        <h2 id="hooks">Webhook deliveries</h2>
        <ErrorBox error={deliveries.error} />
        {deliveries.data && (deliveries.data.length === 0 ? <Status>No deliveries for this call.</Status> : <DeliveryTable deliveries={deliveries.data} onChange={deliveries.reload} />)}
      </section>
    </>
  );
}

type TurnLatency = NonNullable<Call['turns'][number]['latency']>;
const PARTS = [
  { key: 'endpointingMs', label: 'end of turn', className: 'p-endpointing' },
  { key: 'llmFirstTokenMs', label: 'LLM first token', className: 'p-llm' },
  { key: 'ttsFirstAudioMs', label: 'first audio', className: 'p-tts' },
] as const;

/** A voice turn's wait as a stacked bar drawn to one scale for every turn of the call, and the same in words. */
function LatencyParts({ latency, scale, endpointing }: { latency: TurnLatency; scale: number; endpointing: string | undefined }) {
  return (
    <span className="latency-parts">
      <span className="stack" style={{ inlineSize: `${(latency.totalMs / scale) * 16}rem` }} aria-hidden="true">
        {PARTS.map((p) => <span key={p.key} className={p.className} style={{ flexGrow: latency[p.key] }} title={`${p.label}: ${latency[p.key]} ms`} />)}
      </span>
      {' '}{latency.totalMs} ms
      <small className="note">
        {' '}({PARTS.map((p) => `${p.label} ${latency[p.key]} ms`).join(' + ')}{endpointing ? `; ${endpointing} endpointing` : ''})
      </small>
    </span>
  );
}

