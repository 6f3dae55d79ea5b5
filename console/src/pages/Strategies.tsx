import { useState } from 'react';
import { Link } from 'react-router';
import { inOrganization } from '../api/client';
import { ErrorBox, Status } from '../components/form';
import { Pager, Table, when } from '../components/Table';
import { useLoad, useTitle } from '../hooks';
import { useCan, useScope, useSession } from '../session';

export default function Strategies() {
  useTitle('Strategies');
  const { api } = useSession();
  const writable = useCan()('strategies:write');
  const scope = useScope();
  const [page, setPage] = useState(0);
  const list = useLoad(() => inOrganization(api, scope).listLlmGenerationStrategies({ query: { page } }), [api, scope, page]);
  return (
    <>
      <div className="page-head">
        <h1>LLM generation strategies</h1>
        {writable && <Link className="button primary" to="/strategies/new">New strategy</Link>}
      </div>
      <ErrorBox error={list.error} />
      {list.data && (list.data.data.length === 0 ? <Status>No strategies yet.</Status> : (
        <>
          <Table caption="Strategies" head={['Name', 'Type', 'Model', 'Voice', 'Changed']}>
            {list.data.data.map((s) => (
              <tr key={s.id}>
                <td><Link to={`/strategies/${s.id}`}>{s.name}</Link></td>
                <td>{s.type}</td>
                <td>{s.parameters.model ?? 'default'}</td>
                <td>{s.parameters.voice?.provider ?? '—'}</td>
                <td>{when(s.updatedAt)}</td>
              </tr>
            ))}
          </Table>
          <Pager page={page} totalPages={list.data.totalPages} onPage={setPage} />
        </>
      ))}
    </>
  );
}
