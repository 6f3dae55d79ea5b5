import { Link } from 'react-router';
import { inOrganization } from '../api/client';
import { ErrorBox, Status } from '../components/form';
import { Badge, when } from '../components/Table';
import { useLoad } from '../hooks';
import { useScope, useSession } from '../session';

/**
 * A task's attempts, newest first: how each ended (outcome, SIP code, error), when, and the call
 * it placed. A list rather than a table: it opens inside a narrow board column.
 */
export function Attempts({ agentId, taskId }: { agentId: string; taskId: string }) {
  const { api } = useSession();
  const scope = useScope();
  const attempts = useLoad(
    // A task has at most 10 attempts: one page holds them all.
    () => inOrganization(api, scope).listAgentTaskAttempts({ path: { agentId, taskId }, query: { size: 100 } }),
    [api, scope, agentId, taskId],
  );
  if (attempts.error) return <ErrorBox error={attempts.error} />;
  if (!attempts.data) return <Status>Loading attempts…</Status>;
  if (attempts.data.data.length === 0) return <p className="note">No attempts yet.</p>;
  return (
    <ol className="attempts" aria-label="Attempts">
      {attempts.data.data.map((a) => (
        <li key={a.attempt}>
          <span>
            <strong>#{a.attempt}</strong> <Badge value={a.outcome ?? 'running'} />
            {a.sipCode !== null && <> SIP {a.sipCode}</>}
            {a.callId && <> · <Link to={`/calls/${a.callId}`} aria-label={`Call of attempt ${a.attempt}`}>call</Link></>}
          </span>
          <small>{when(a.startedAt)}{a.endedAt ? ` – ${when(a.endedAt)}` : ''}</small>
          {a.error && <small className="bad">{a.error}</small>}
        </li>
      ))}
    </ol>
  );
}
