import { inOrganization } from '../api/client';
import type { Task } from '../api/types';
import { ErrorBox, Status } from '../components/form';
import { Table } from '../components/Table';
import { useLoad } from '../hooks';
import { useScope, useSession } from '../session';
import { countOutcomes, inBatches, perDay } from './campaign';

/**
 * The API counts tasks by status (kept counters) but has no count by outcome or by day: those
 * come from reading the tasks themselves, at most this many, most recently changed first…
 */
const MAX_TASKS_READ = 500;
/** …and the last attempt of at most this many finished tasks (one request each, a few at once). */
const MAX_OUTCOMES_READ = 100;
const PAGE = 100;
const AT_ONCE = 4;

const STATUS_WORDS: Record<string, string> = {
  PENDING: 'Pending (not scheduled)', SCHEDULED: 'Scheduled (waiting for its time)', IN_PROGRESS: 'In progress',
  COMPLETED: 'Done', FAILED: 'Failed', CANCELLED: 'Cancelled',
};

const OUTCOME_WORDS: Record<string, string> = {
  completed: 'answered', voicemail: 'voicemail, no message left', voicemail_left: 'message left on voicemail', no_answer: 'no answer',
  busy: 'busy', declined: 'declined', invalid_number: 'invalid number', failed: 'failed (error)', lease_expired: 'worker lost (lease expired)',
  cancelled: 'cancelled', none: 'no attempt recorded',
};

const FINISHED = new Set(['COMPLETED', 'FAILED']);

/** How the agent's campaign stands: tasks by status (exact), by how the finished ones ended, and per day. */
export function Summary({ agentId, totals }: { agentId: string; totals: { status: string; total: number }[] }) {
  const { api } = useSession();
  const scope = useScope();
  const org = inOrganization(api, scope);
  const all = totals.reduce((n, t) => n + t.total, 0);
  const read = useLoad(async () => {
    const tasks: Task[] = [];
    let total = 0;
    for (let page = 0; tasks.length < MAX_TASKS_READ; page++) {
      const answer = await org.listAgentTasks({ path: { agentId }, query: { page, size: PAGE, sort: 'updatedAt,desc' } });
      tasks.push(...answer.data);
      total = answer.totalElements;
      if (answer.data.length < PAGE || tasks.length >= total) break;
    }
    const finished = tasks.filter((t) => FINISHED.has(t.status)).sort((a, b) => (b.completedAt ?? '').localeCompare(a.completedAt ?? ''));
    const sampled = finished.slice(0, MAX_OUTCOMES_READ);
    const outcomes = await inBatches(sampled, AT_ONCE, async (task) => {
      const last = await org.listAgentTaskAttempts({ path: { agentId, taskId: task.id }, query: { size: 1 } });
      return last.data[0]?.outcome ?? 'none';
    });
    return { tasks, total, finished: finished.length, outcomes };
  }, [api, scope, agentId, totals]);

  const data = read.data;
  const days = data ? perDay(data.tasks) : [];
  const oldest = data?.tasks.reduce((min, t) => (t.updatedAt < min ? t.updatedAt : min), data.tasks[0]?.updatedAt ?? '');
  return (
    <section className="card" aria-labelledby="summary">
      <h2 id="summary">Campaign summary</h2>
      <ErrorBox error={read.error} />
      <div className="summary-grid">
        <Table caption="Tasks by status" head={['Status', 'Tasks']}>
          {totals.map((t) => <tr key={t.status}><td>{STATUS_WORDS[t.status] ?? t.status}</td><td>{t.total}</td></tr>)}
          <tr><th scope="row">All</th><td>{all}</td></tr>
        </Table>
        {data && (
          <div>
            {data.outcomes.length === 0 ? <p className="note">No task has finished yet.</p> : (
              <Table caption="Finished tasks by outcome" head={['Outcome', 'Tasks']}>
                {countOutcomes(data.outcomes.map((o) => OUTCOME_WORDS[o] ?? o)).map(([outcome, n]) => <tr key={outcome}><td>{outcome}</td><td>{n}</td></tr>)}
              </Table>
            )}
            <p className="note">
              How each done or failed task ended: its last attempt.
              {data.finished > data.outcomes.length && ` Partial: the ${data.outcomes.length} most recently finished of the ${data.finished} finished tasks read.`}
            </p>
          </div>
        )}
        {data && (
          <div>
            {days.length > 0 && (
              <Table caption="Tasks per day" head={['Day (UTC)', 'Created', 'Done', 'Failed']}>
                {days.map((d) => <tr key={d.day}><td>{d.day}</td><td>{d.created}</td><td>{d.completed}</td><td>{d.failed}</td></tr>)}
              </Table>
            )}
            {data.total > data.tasks.length && (
              <p className="note" role="note">
                Partial: read the {data.tasks.length} most recently changed of {data.total} tasks (the API counts by status only), so days
                before {oldest?.slice(0, 10)} and the outcomes may be short.
              </p>
            )}
          </div>
        )}
      </div>
      {!data && !read.error && <Status>Reading tasks for the summary…</Status>}
    </section>
  );
}
