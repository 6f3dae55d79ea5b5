import { useState } from 'react';
import { Link } from 'react-router';
import { inOrganization } from '../api/client';
import { ErrorBox, SelectField, Status } from '../components/form';
import { Badge, Pager, Table, when } from '../components/Table';
import { useLoad, useTitle } from '../hooks';
import { useScope, useSession } from '../session';

type CallStatus = 'ringing' | 'active' | 'ended';

/** Calls, newest first, filtered by assistant, agent and status. */
export default function Calls() {
  useTitle('Calls');
  const { api } = useSession();
  const scope = useScope();
  const [status, setStatus] = useState<CallStatus | ''>('');
  const [source, setSource] = useState('');
  const [page, setPage] = useState(0);
  const sources = useLoad(async () => {
    const query = { size: 100 };
    const org = inOrganization(api, scope);
    const [assistants, agents] = await Promise.all([org.listAssistants({ query }).then((p) => p.data), org.listAgents({ query }).then((p) => p.data)]);
    return [...assistants.map((a) => ({ key: `assistant:${a.id}`, name: a.name })), ...agents.map((a) => ({ key: `agent:${a.id}`, name: `${a.name} (agent)` }))];
  }, [api, scope]);
  const names = new Map((sources.data ?? []).map((s) => [s.key.split(':')[1], s.name]));
  const list = useLoad(() => {
    const [kind, id] = source.split(':');
    const query = {
      page, ...(status ? { status } : {}),
      ...(kind === 'assistant' ? { assistantId: id } : kind === 'agent' ? { agentId: id } : {}),
    };
    return inOrganization(api, scope).listCalls({ query });
  }, [api, scope, status, source, page]);

  return (
    <>
      <h1>Calls</h1>
      <div className="filters">
        <SelectField label="Assistant or agent" value={source} onChange={(e) => { setSource(e.target.value); setPage(0); }}>
          <option value="">All</option>
          {(sources.data ?? []).map((s) => <option key={s.key} value={s.key}>{s.name}</option>)}
        </SelectField>
        <SelectField label="Status" value={status} onChange={(e) => { setStatus(e.target.value as CallStatus | ''); setPage(0); }}>
          <option value="">All</option>
          <option value="ringing">ringing</option>
          <option value="active">active</option>
          <option value="ended">ended</option>
        </SelectField>
      </div>
      <ErrorBox error={list.error} />
      {list.data && (list.data.data.length === 0 ? <Status>No calls match.</Status> : (
        <>
          <Table caption="Calls" head={['Started', 'With', 'Status', 'Outcome', 'Tools', 'Turns']}>
            {list.data.data.map((c) => (
              <tr key={c.id}>
                <td><Link to={`/calls/${c.id}`}>{when(c.startedAt ?? c.createdAt)}</Link></td>
                <td>{names.get(c.assistantId ?? c.agentId ?? '') ?? c.kind}</td>
                <td><Badge value={c.status} /></td>
                <td>{c.conclusion ? <Badge value={c.conclusion.outcome} /> : '—'}</td>
                <td>{c.toolInvocations.length}</td>
                <td>{c.transcript.length}</td>
              </tr>
            ))}
          </Table>
          <Pager page={page} totalPages={list.data.totalPages} onPage={setPage} />
        </>
      ))}
    </>
  );
}
