import { useState } from 'react';
import { inOrganization } from '../api/client';
import { Funnel, Stat, StackedBars } from '../components/Charts';
import { ErrorBox, SelectField, Status } from '../components/form';
import { Table } from '../components/Table';
import { useLoad, useTitle } from '../hooks';
import { useCan, useScope, useSession } from '../session';

const SERIES = [
  { key: 'completed', label: 'completed', className: 's-completed' },
  { key: 'abandoned', label: 'abandoned', className: 's-abandoned' },
  { key: 'failed', label: 'failed', className: 's-failed' },
];
const ANSWERED = [
  { key: 'human', label: 'human', className: 's-human' },
  { key: 'voicemail', label: 'voicemail', className: 's-voicemail' },
  { key: 'screening', label: 'screening', className: 's-screening' },
  { key: 'unknown', label: 'unknown', className: 's-unknown' },
];
const DAY = 86_400_000;

/** Calls per day by outcome and by who answered, turn latency, tool error rate and the task funnel, from GET …/analytics/overview. */
export default function Overview() {
  useTitle('Overview');
  const { api } = useSession();
  const scope = useScope();
  const readable = useCan()('calls:read');
  const [days, setDays] = useState(30);
  const overview = useLoad(async () => {
    if (!readable) return null;
    const to = new Date();
    const query = { from: new Date(to.getTime() - days * DAY).toISOString(), to: to.toISOString() };
    return inOrganization(api, scope).getAnalyticsOverview({ query });
  }, [api, scope, days, readable]);

  return (
    <>
      <div className="page-head">
        <h1>Overview</h1>
        <SelectField label="Period" value={days} onChange={(e) => setDays(Number(e.target.value))}>
          <option value={7}>Last 7 days</option>
          <option value={30}>Last 30 days</option>
          <option value={90}>Last 90 days</option>
        </SelectField>
      </div>
      {!readable && <Status>This token may not read calls, so there is nothing to chart.</Status>}
      <ErrorBox error={overview.error} />
      {overview.data && (() => {
        const o = overview.data;
        const t = o.tasks;
        return (
          <>
            <div className="stats">
              <Stat label="turn latency, median" value={o.turnLatency.p50Ms === null ? '—' : `${o.turnLatency.p50Ms} ms`} />
              <Stat label="turn latency, p95" value={o.turnLatency.p95Ms === null ? '—' : `${o.turnLatency.p95Ms} ms`} />
              <Stat label={`answered turns`} value={String(o.turnLatency.turns)} />
              <Stat label="voice response, median" value={o.responseLatency.p50Ms === null ? '—' : `${o.responseLatency.p50Ms} ms`} />
              <Stat label="voice response, p95" value={o.responseLatency.p95Ms === null ? '—' : `${o.responseLatency.p95Ms} ms`} />
              <Stat label={`false interruptions of ${o.interruptions.real + o.interruptions.false}`} value={`${(o.interruptions.falseRate * 100).toFixed(1)} %`} />
              <Stat label={`tool errors of ${o.tools.invocations} calls`} value={`${(o.tools.errorRate * 100).toFixed(1)} %`} />
            </div>
            <section className="card" aria-labelledby="per-day">
              <h2 id="per-day">Calls per day</h2>
              <StackedBars title="Calls per day by outcome" series={SERIES} rows={o.callsPerDay.map(({ day, ...values }) => ({ label: day, values }))} />
              <details>
                <summary>As a table</summary>
                <Table caption="Calls per day" head={['Day', 'Completed', 'Abandoned', 'Failed']}>
                  {o.callsPerDay.map((d) => <tr key={d.day}><td>{d.day}</td><td>{d.completed}</td><td>{d.abandoned}</td><td>{d.failed}</td></tr>)}
                </Table>
              </details>
            </section>
            <section className="card" aria-labelledby="answered">
              <h2 id="answered">Who answered</h2>
              <p className="note">Agent task calls with voicemail detection, by the day they ended.</p>
              <StackedBars title="Calls per day by who answered" series={ANSWERED} rows={o.answeredByPerDay.map(({ day, ...values }) => ({ label: day, values }))} />
              <details>
                <summary>As a table</summary>
                <Table caption="Who answered per day" head={['Day', 'Human', 'Voicemail', 'Screening', 'Unknown']}>
                  {o.answeredByPerDay.map((d) => <tr key={d.day}><td>{d.day}</td><td>{d.human}</td><td>{d.voicemail}</td><td>{d.screening}</td><td>{d.unknown}</td></tr>)}
                </Table>
              </details>
            </section>
            <section className="card" aria-labelledby="funnel">
              <h2 id="funnel">Tasks</h2>
              <Funnel title="Task completion funnel" stages={[
                { label: 'all tasks', value: t.pending + t.scheduled + t.inProgress + t.completed + t.failed + t.cancelled },
                { label: 'scheduled or further', value: t.scheduled + t.inProgress + t.completed + t.failed },
                { label: 'attempted to an end', value: t.completed + t.failed },
                { label: 'completed', value: t.completed },
              ]} />
            </section>
          </>
        );
      })()}
    </>
  );
}
