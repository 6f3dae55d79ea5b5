import { useState } from 'react';
import { inOrganization } from '../api/client';
import type { Call } from '../api/types';
import { ErrorBox, Status } from '../components/form';
import { useCan, useScope, useSession } from '../session';

/** A value of the extracted data, as text: strings as they are, anything else as JSON. */
const shown = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/** The verdict of a success evaluation, in words. */
function verdict(success: unknown): string {
  if (success === true) return 'Success';
  if (success === false) return 'Not a success';
  if (typeof success === 'number') return `${success} / 10`;
  return String(success);
}

/** What the analysis made of a call: its summary, the extracted data as a table, the verdict; and running it again. */
export function Analysis({ call, onChange }: { call: Call; onChange: () => void }) {
  const { api } = useSession();
  const scope = useScope();
  const can = useCan();
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const conclusion = call.conclusion!;
  const data = conclusion.data;
  const rows = data !== null && typeof data === 'object' && !Array.isArray(data) ? Object.entries(data as Record<string, unknown>) : null;

  const again = async () => {
    setBusy(true);
    setError(null);
    try {
      await inOrganization(api, scope).analyzeCall({ path: { callId: call.id } });
      onChange();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card" aria-labelledby="analysis">
      <h2 id="analysis">Analysis</h2>
      {conclusion.analysisStatus === null && <Status>Not analysed: the {call.kind} asks for no analysis, or the call was too short.</Status>}
      {conclusion.analysisStatus === 'pending' && <Status>The analysis is running.</Status>}
      {conclusion.analysisStatus === 'failed' && <p className="bad">The analysis failed; the LLM could not be reached.</p>}
      <dl className="facts">
        {conclusion.summary && <><dt>Summary</dt><dd>{conclusion.summary}</dd></>}
        {conclusion.success !== null && <><dt>Verdict</dt><dd className={conclusion.success === false ? 'bad' : ''}>{verdict(conclusion.success)}</dd></>}
        {conclusion.analyzedAt && <><dt>Analysed</dt><dd>{new Date(conclusion.analyzedAt).toLocaleString()}</dd></>}
      </dl>
      {rows && (
        <table className="analysis-data">
          <caption>Extracted data</caption>
          <tbody>{rows.map(([key, value]) => <tr key={key}><th scope="row">{key}</th><td>{shown(value)}</td></tr>)}</tbody>
        </table>
      )}
      {data !== null && !rows && <p>Extracted data: <code>{shown(data)}</code></p>}
      {conclusion.dataError && (
        <div className="bad" role="note">
          <p>The data did not satisfy the schema: {conclusion.dataError.errors.map((e) => `${e.path || '(value)'} ${e.message}`).join('; ')}</p>
          <p>The LLM answered: <code>{conclusion.dataError.raw}</code></p>
        </div>
      )}
      <ErrorBox error={error} />
      {can('calls:write') && call.status === 'ended' && (
        <button type="button" disabled={busy || conclusion.analysisStatus === 'pending'} onClick={() => void again()}>Analyse again</button>
      )}
    </section>
  );
}
