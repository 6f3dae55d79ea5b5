import { useEffect, useState } from 'react';
import { inOrganization } from '../api/client';
import { ErrorBox } from '../components/form';
import { when } from '../components/Table';
import { useLoad } from '../hooks';
import { useScope, useSession } from '../session';

/**
 * Whether the agent's tasks are paused, read from the API on load, and one switch that pauses
 * or resumes them (for whoever may write tasks; others see the state only).
 */
export function PauseToggle({ agentId, writable }: { agentId: string; writable: boolean }) {
  const { api } = useSession();
  const scope = useScope();
  const org = inOrganization(api, scope);
  const loaded = useLoad(() => org.getAgentTasksPause({ path: { agentId } }), [api, scope, agentId]);
  const [state, setState] = useState(loaded.data);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => setState(loaded.data), [loaded.data]);

  const toggle = async (pause: boolean) => {
    setBusy(true);
    setError(null);
    try {
      // The board does not change: a pause only stops what would start next.
      setState(await (pause ? org.pauseAgentTasks({ path: { agentId } }) : org.resumeAgentTasks({ path: { agentId } })));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  if (!state) return <ErrorBox error={loaded.error} />;
  return (
    <div className="pause">
      {writable && (
        <label className="switch">
          <input type="checkbox" role="switch" checked={state.paused} disabled={busy} onChange={(e) => void toggle(e.target.checked)} />
          {' '}Pause this agent's tasks
        </label>
      )}
      <span role="status" className={state.paused ? 'bad' : 'good'}>
        {state.paused ? `Paused since ${when(state.pausedAt)}: no new task starts; calls under way finish.` : 'Running: tasks start when they are due.'}
      </span>
      <ErrorBox error={error} />
    </div>
  );
}
