import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { inOrganization } from '../api/client';
import type { Task } from '../api/types';
import { ErrorBox, Status } from '../components/form';
import { Badge, when } from '../components/Table';
import { useLoad, useTitle } from '../hooks';
import { useCan, useScope, useSession } from '../session';
import { Attempts } from '../tasks/Attempts';
import { CsvUpload } from '../tasks/CsvUpload';
import { NewTask } from '../tasks/NewTask';
import { PauseToggle } from '../tasks/PauseToggle';
import { calleeName } from '../tasks/campaign';
import { Summary } from '../tasks/Summary';

const STATUSES = ['PENDING', 'SCHEDULED', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;
type TaskStatus = (typeof STATUSES)[number];

/**
 * An agent's tasks: its pause switch, a board by status with counts and callee names, the
 * campaign summary, one task from a form or many from a CSV, cancel, run, and attempts.
 */
export default function Tasks() {
  const { id = '' } = useParams();
  const { api } = useSession();
  const scope = useScope();
  const org = inOrganization(api, scope);
  const path = { agentId: id };
  const writable = useCan()('tasks:write');
  const agent = useLoad(() => org.getAgent({ path }), [api, scope, id]);
  useTitle(`Tasks of ${agent.data?.name ?? 'agent'}`);
  const board = useLoad(async () => {
    const columns = await Promise.all(STATUSES.map((status) => org.listAgentTasks({ path, query: { status, size: 10, sort: 'updatedAt,desc' } })));
    return STATUSES.map((status, i) => ({ status, total: columns[i]?.totalElements ?? 0, tasks: columns[i]?.data ?? [] }));
  }, [api, scope, id]);
  const [error, setError] = useState<unknown>(null);
  const [open, setOpen] = useState<string | null>(null);

  const act = async (run: () => Promise<unknown>) => {
    setError(null);
    try {
      await run();
      board.reload();
    } catch (e) {
      setError(e);
    }
  };
  const taskAction = (task: Task, action: 'cancel' | 'execute') =>
    act(() => (action === 'cancel' ? org.cancelAgentTask : org.executeAgentTask)({ path: { ...path, taskId: task.id } }));

  return (
    <>
      <div className="page-head">
        <h1>Tasks of {agent.data ? <Link to={`/agents/${id}`}>{agent.data.name}</Link> : 'agent'}</h1>
        <PauseToggle agentId={id} writable={writable} />
      </div>
      <ErrorBox error={error ?? board.error} />
      {board.data && (
        <div className="board" role="region" aria-label="Tasks by status" tabIndex={0}>
          {board.data.map((column) => (
            <section key={column.status} className="column" aria-labelledby={`col-${column.status}`}>
              <h2 id={`col-${column.status}`}><Badge value={column.status} /> <span className="count">{column.total}</span></h2>
              <ul>
                {column.tasks.map((task) => (
                  <li key={task.id} className="task">
                    {calleeName(task.userValues) && <strong className="task-name">{calleeName(task.userValues)}</strong>}
                    <span className="task-number">{task.targetNumber}</span>
                    <small>{task.attempts}/{task.maxAttempts} attempts · next {when(task.nextAttemptAt)}{task.agentVersion !== null && ` · agent version ${task.agentVersion}`}</small>
                    {task.lastError && <small className="bad">{task.lastError}</small>}
                    <span className="row">
                      {writable && (['PENDING', 'SCHEDULED', 'IN_PROGRESS'] as TaskStatus[]).includes(task.status) && (
                        <button type="button" onClick={() => void taskAction(task, 'cancel')} aria-label={`Cancel task to ${task.targetNumber}`}>Cancel</button>
                      )}
                      {writable && (['PENDING', 'FAILED', 'CANCELLED'] as TaskStatus[]).includes(task.status) && (
                        <button type="button" onClick={() => void taskAction(task, 'execute')} aria-label={`Run task to ${task.targetNumber}`}>Run</button>
                      )}
                      <button type="button" aria-expanded={open === task.id} onClick={() => setOpen(open === task.id ? null : task.id)} aria-label={`Attempts of task to ${task.targetNumber}`}>Attempts</button>
                    </span>
                    {open === task.id && <Attempts agentId={id} taskId={task.id} />}
                  </li>
                ))}
                {column.total > column.tasks.length && <li className="note">and {column.total - column.tasks.length} more</li>}
              </ul>
            </section>
          ))}
        </div>
      )}
      {!board.data && !board.error && <Status>Loading…</Status>}
      {board.data && <Summary agentId={id} totals={board.data} />}
      {writable && <NewTask agentId={id} onCreated={board.reload} />}
      {writable && <CsvUpload agentId={id} onCreated={board.reload} />}
    </>
  );
}
