import { COMING_ROUTES, fetchAttempts } from '../api/coming';
import { useApiHas } from '../api/document';
import { ErrorBox, Status } from '../components/form';
import { Table, when } from '../components/Table';
import { useLoad } from '../hooks';
import { useScope, useSession } from '../session';

/** A task's attempts and their outcomes (the coming attempts route; see api/coming.ts). */
export function Attempts({ agentId, taskId }: { agentId: string; taskId: string }) {
  const { token } = useSession();
  const scope = useScope();
  const available = useApiHas(COMING_ROUTES.attempts);
  const attempts = useLoad(async () => (available ? fetchAttempts(token, scope, agentId, taskId) : null), [token, scope, agentId, taskId, available]);
  if (available === false) return <p className="note">This server does not list attempts yet; the task shows its attempt count and last error.</p>;
  if (attempts.error) return <ErrorBox error={attempts.error} />;
  if (!attempts.data) return <Status>Loading attempts…</Status>;
  if (attempts.data.length === 0) return <p className="note">No attempts yet.</p>;
  return (
    <Table caption="Attempts" head={['#', 'Started', 'Ended', 'Outcome', 'SIP', 'Error']}>
      {attempts.data.map((a) => (
        <tr key={a.attempt}>
          <td>{a.attempt}</td><td>{when(a.startedAt)}</td><td>{when(a.endedAt)}</td>
          <td>{a.outcome ?? '—'}</td><td>{a.sipCode ?? '—'}</td><td>{a.error ?? ''}</td>
        </tr>
      ))}
    </Table>
  );
}
