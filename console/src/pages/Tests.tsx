import { useEffect, useRef, useState, type ChangeEvent } from 'react';
import { Link, useParams } from 'react-router';
import type { TestResult } from '../../../src/calls/testing/run.ts';
import { inOrganization } from '../api/client';
import { plural, type Kind } from '../api/types';
import { readSuite, runSuite } from '../assistant/runTests';
import { ErrorBox, Status, TextArea } from '../components/form';
import { useLoad, useTitle } from '../hooks';
import { useCan, useScope, useSession } from '../session';

const EXAMPLE = `assistant: Order desk
tests:
  - name: a caller gets the order's status
    caller:
      turns: [Where is order A-17?]
    mocks:
      - tool: lookup_order
        response: { status: shipped }
    expect:
      toolsCalled: [{ tool: lookup_order }]
      transcriptContains: [shipped]
`;

/** One test's report: passed or failed, every check with its verdict and reason, the conversation. */
function TestReport({ result }: { result: TestResult }) {
  return (
    <section className="card" aria-label={`Test: ${result.name}`}>
      <h3>{result.passed ? '✓ Passed' : '✗ Failed'}: {result.name}</h3>
      <p className="muted">{(result.ms / 1000).toFixed(1)} s · {result.callId ? <Link to={`/calls/${result.callId}`}>the call</Link> : 'no call started'} · ended: {result.endReason}</p>
      <ul>
        {result.checks.map((check, i) => (
          <li key={i}>{check.passed ? 'ok' : 'FAILED'}: {check.what}{check.detail ? ` — ${check.detail}` : ''}</li>
        ))}
        {result.checks.length === 0 && <li>No expectation to check: the call ran cleanly.</li>}
      </ul>
      <details open={!result.passed}>
        <summary>Conversation ({result.transcript.length} lines)</summary>
        <ol className="transcript">
          {result.transcript.map((line, i) => <li key={i}><strong>{line.role === 'caller' ? 'Caller' : 'Assistant'}:</strong> {line.text}</li>)}
        </ol>
      </details>
    </section>
  );
}

/**
 * An assistant's or agent's tests: a test file (docs/testing-assistants.md) pasted or loaded,
 * run here as `parley test` runs it (each test a real call, tools answered by mocks), reported.
 */
export default function Tests({ kind }: { kind: Kind }) {
  const { id = '' } = useParams();
  const { api } = useSession();
  const scope = useScope();
  const can = useCan();
  // Answering an assistant's tools is as much power as changing it: the service asks both.
  const runnable = can('calls:write') && can(`${plural(kind)}:write`);
  const [text, setText] = useState('');
  const [results, setResults] = useState<TestResult[]>([]);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const stop = useRef(false);
  useEffect(() => () => {
    stop.current = true;
  }, []);

  const owner = useLoad(() => {
    const org = inOrganization(api, scope);
    return kind === 'agent' ? org.getAgent({ path: { agentId: id } }) : org.getAssistant({ path: { assistantId: id } });
  }, [api, scope, kind, id]);
  useTitle(`Tests of ${owner.data?.name ?? kind}`);

  const load = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    if (file) setText(await file.text());
  };
  const run = async () => {
    if (!owner.data) return;
    setError(null);
    setResults([]);
    try {
      const suite = readSuite(text, kind, owner.data.name);
      setRunning(true);
      stop.current = false;
      await runSuite(inOrganization(api, scope), kind, owner.data, suite, (r) => setResults((all) => [...all, r]), () => stop.current);
    } catch (e) {
      setError(e);
    } finally {
      setRunning(false);
    }
  };

  if (owner.error) return <ErrorBox error={owner.error} />;
  const failed = results.filter((r) => !r.passed).length;
  return (
    <>
      <div className="page-head">
        <h1>Tests of {owner.data ? <Link to={`/${plural(kind)}/${id}`}>{owner.data.name}</Link> : kind}</h1>
      </div>
      <p>
        Each test is a real call to this {kind} in text: its tool webhooks are answered by the file's mocks and never called,
        the caller is scripted or played by an LLM, and what the {kind} said is checked. The format is the one of <code>parley test</code>.
      </p>
      <TextArea label="Test file (YAML)" rows={10} value={text} placeholder={EXAMPLE} spellCheck={false}
        onChange={(e) => setText(e.target.value)} hint={`The file names this ${kind}: "${kind}: ${owner.data?.name ?? ''}"`} />
      <div className="row">
        <label className="button">Load a file… <input type="file" accept=".yaml,.yml,text/yaml" onChange={(e) => void load(e)} hidden /></label>
        {runnable && !running && <button type="button" className="primary" disabled={!text.trim() || !owner.data} onClick={() => void run()}>Run</button>}
        {running && <button type="button" onClick={() => { stop.current = true; }}>Stop after this test</button>}
      </div>
      {!runnable && <p className="muted">Running tests needs calls:write and {plural(kind)}:write.</p>}
      <ErrorBox error={error} />
      {running && <Status>Running test {results.length + 1}…</Status>}
      {results.length > 0 && !running && <p role="status">{results.length} tests: {results.length - failed} passed, {failed} failed.</p>}
      {results.map((r, i) => <TestReport key={i} result={r} />)}
    </>
  );
}
