import { useState } from 'react';
import { Link } from 'react-router';
import { inOrganization } from '../api/client';
import { plural, type Kind } from '../api/types';
import { ErrorBox, SelectField, Status, TextField } from '../components/form';
import { Pager, Table, when } from '../components/Table';
import { useLoad, useTitle } from '../hooks';
import { useCan, useScope, useSession } from '../session';

const SORTS = [
  ['name,asc', 'Name A–Z'],
  ['name,desc', 'Name Z–A'],
  ['updatedAt,desc', 'Recently changed'],
  ['createdAt,desc', 'Newest'],
] as const;

type Sort = (typeof SORTS)[number][0];

/** Assistants or agents: search by the start of the name, sort, page. */
export default function AssistantList({ kind }: { kind: Kind }) {
  const title = kind === 'agent' ? 'Agents' : 'Assistants';
  useTitle(title);
  const { api } = useSession();
  const can = useCan();
  const scope = useScope();
  const [q, setQ] = useState('');
  const [sort, setSort] = useState<Sort>('name,asc');
  const [page, setPage] = useState(0);
  const list = useLoad(() => {
    const args = { query: { page, size: 20, sort, ...(q.trim() ? { q: q.trim() } : {}) } };
    const org = inOrganization(api, scope);
    return kind === 'agent' ? org.listAgents(args) : org.listAssistants(args);
  }, [api, scope, kind, q, sort, page]);

  return (
    <>
      <div className="page-head">
        <h1>{title}</h1>
        {can(`${plural(kind)}:write`) && <Link className="button primary" to={`/${plural(kind)}/new`}>New {kind}</Link>}
      </div>
      <div className="filters">
        <TextField label="Search by name" type="search" value={q} onChange={(e) => { setQ(e.target.value); setPage(0); }} hint="Names that start with this text" />
        <SelectField label="Sort" value={sort} onChange={(e) => setSort(e.target.value as Sort)}>
          {SORTS.map(([value, label]) => <option key={value} value={value}>{label}</option>)}
        </SelectField>
      </div>
      <ErrorBox error={list.error} />
      {list.data && (list.data.data.length === 0
        ? <Status>{q ? `No ${plural(kind)} start with “${q}”.` : `No ${plural(kind)} yet.`}</Status>
        : (
          <>
            <Table caption={title} head={['Name', 'Tools', 'Strategy', 'Changed']}>
              {list.data.data.map((a) => (
                <tr key={a.id}>
                  <td><Link to={`/${plural(kind)}/${a.id}`}>{a.name}</Link></td>
                  <td>{a.extensions.filter((e) => e.type === 'tool_webhook').length}</td>
                  <td>{a.llmAudioContentGenerationStrategyId ? 'set' : '—'}</td>
                  <td>{when(a.updatedAt)}</td>
                </tr>
              ))}
            </Table>
            <p className="note">{list.data.totalElements} in all</p>
            <Pager page={page} totalPages={list.data.totalPages} onPage={setPage} />
          </>
        ))}
    </>
  );
}
