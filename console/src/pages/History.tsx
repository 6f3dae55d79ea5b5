import { useEffect, useState } from 'react';
import { Link, useParams } from 'react-router';
import { inOrganization } from '../api/client';
import { plural, type Kind } from '../api/types';
import { getVersion, listVersions, restoreVersion } from '../assistant/versions';
import { VersionDiff } from '../assistant/VersionDiff';
import { ErrorBox, SelectField, Status } from '../components/form';
import { Badge, Pager, Table, when } from '../components/Table';
import { useLoad, useTitle } from '../hooks';
import { useCan, useScope, useSession } from '../session';

const PAGE = 20;

/**
 * An assistant's or agent's versions, newest first: who changed what and when, the differences
 * between any two, and a restore (asked twice) of any earlier one.
 */
export default function History({ kind }: { kind: Kind }) {
  const { id = '' } = useParams();
  const { api } = useSession();
  const scope = useScope();
  const writable = useCan()(`${plural(kind)}:write`);
  const [page, setPage] = useState(0);
  const [pair, setPair] = useState<{ from: number; to: number } | null>(null);
  const [asking, setAsking] = useState<number | null>(null);
  const [said, setSaid] = useState('');
  const [error, setError] = useState<unknown>(null);

  const owner = useLoad(() => {
    const org = inOrganization(api, scope);
    return kind === 'agent' ? org.getAgent({ path: { agentId: id } }) : org.getAssistant({ path: { assistantId: id } });
  }, [api, scope, kind, id]);
  const list = useLoad(() => listVersions(api, scope, kind, id, page, PAGE), [api, scope, kind, id, page]);
  // The newest two, whatever page is shown: the current version, and what the diff starts from.
  const newest = useLoad(() => listVersions(api, scope, kind, id, 0, 2), [api, scope, kind, id, list.data]);
  const current = newest.data?.data[0]?.number;
  useTitle(`History of ${owner.data?.name ?? kind}`);

  useEffect(() => {
    const [last, before] = newest.data?.data ?? [];
    if (last && !pair) setPair({ from: before?.number ?? last.number, to: last.number });
  }, [newest.data, pair]);

  const diff = useLoad(async () => (pair
    ? { from: await getVersion(api, scope, kind, id, pair.from), to: await getVersion(api, scope, kind, id, pair.to) }
    : null), [api, scope, kind, id, pair?.from, pair?.to]);

  const restore = async (number: number) => {
    setError(null);
    setSaid('');
    try {
      const { made, version } = await restoreVersion(api, scope, kind, id, number);
      setSaid(made ? `Restored version ${number} as version ${version.number}.` : `Nothing to restore: version ${version.number} already has the configuration of version ${number}.`);
      setAsking(null);
      setPage(0);
      setPair({ from: number, to: version.number });
      list.reload();
    } catch (e) {
      setError(e);
    }
  };

  if (owner.error) return <ErrorBox error={owner.error} />;
  const numbers = [...new Set([...(list.data?.data ?? []).map((v) => v.number), ...(pair ? [pair.from, pair.to] : [])])].sort((x, y) => y - x);

  return (
    <>
      <div className="page-head">
        <h1>History of {owner.data ? <Link to={`/${plural(kind)}/${id}`}>{owner.data.name}</Link> : kind}</h1>
      </div>
      <ErrorBox error={error ?? list.error} />
      {said && <p role="status">{said}</p>}
      {!list.data ? <Status>Loading versions…</Status> : (
        <>
          <Table caption="Versions" head={['Version', 'Made', 'By', 'What changed', '']}>
            {list.data.data.map((v) => (
              <tr key={v.number}>
                <td>{v.number} {v.number === current && <Badge value="current" />}</td>
                <td>{when(v.createdAt)}</td>
                <td>{v.token ? v.token.name : '—'}</td>
                <td>{v.summary}</td>
                <td>
                  {asking === v.number ? (
                    <div className="row" role="group" aria-label={`Restore version ${v.number}?`}>
                      <button type="button" className="primary" onClick={() => void restore(v.number)}>Restore version {v.number} now</button>
                      <button type="button" onClick={() => setAsking(null)}>Keep the current one</button>
                    </div>
                  ) : (
                    <div className="row">
                      {current !== undefined && v.number !== current && (
                        <button type="button" onClick={() => setPair({ from: v.number, to: current })} aria-label={`Compare version ${v.number} with the current one`}>Compare</button>
                      )}
                      {writable && current !== undefined && v.number !== current && (
                        <button type="button" onClick={() => setAsking(v.number)} aria-label={`Restore version ${v.number}`}>Restore</button>
                      )}
                    </div>
                  )}
                </td>
              </tr>
            ))}
          </Table>
          <Pager page={page} totalPages={list.data.totalPages} onPage={setPage} />
          <p className="note">By: the API token that made the change; — for the platform admin token. Only the newest 100 versions are kept.</p>
        </>
      )}

      <section className="card" aria-labelledby="differences">
        <h2 id="differences">Differences</h2>
        {pair && (
          <div className="filters">
            <SelectField label="From version" value={pair.from} onChange={(e) => setPair({ ...pair, from: Number(e.target.value) })}>
              {numbers.map((n) => <option key={n} value={n}>{n}</option>)}
            </SelectField>
            <SelectField label="To version" value={pair.to} onChange={(e) => setPair({ ...pair, to: Number(e.target.value) })}>
              {numbers.map((n) => <option key={n} value={n}>{n}</option>)}
            </SelectField>
          </div>
        )}
        <ErrorBox error={diff.error} />
        {diff.data ? <VersionDiff from={diff.data.from} to={diff.data.to} /> : pair && <Status>Loading the two versions…</Status>}
        <p className="note">Write-only values (header values, secrets) show as ******** in every version: a change to one alone shows no difference here, but its version says what it changed.</p>
      </section>
    </>
  );
}
