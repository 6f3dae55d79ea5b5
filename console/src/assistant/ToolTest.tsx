import { useState } from 'react';
import { inOrganization } from '../api/client';
import type { ExtensionTestResult } from '../api/types';
import { ErrorBox, TextArea } from '../components/form';
import { useScope, useSession } from '../session';
import { sampleArguments, type ToolForm } from './draft';

/** "Send test request": the service sends the tool webhook a call would send, and this shows what came back. */
export function ToolTest({ kind, ownerId, tool }: { kind: 'assistant' | 'agent'; ownerId: string; tool: ToolForm }) {
  const { api } = useSession();
  const scope = useScope();
  const [args, setArgs] = useState(() => JSON.stringify(sampleArguments(tool), null, 2));
  const [result, setResult] = useState<ExtensionTestResult | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const send = async () => {
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      const parameters = JSON.parse(args || '{}') as Record<string, unknown>;
      const extensionId = tool.id ?? '';
      const body = { parameters };
      const org = inOrganization(api, scope);
      setResult(await (kind === 'agent'
        ? org.testAgentExtension({ path: { agentId: ownerId, extensionId }, body })
        : org.testAssistantExtension({ path: { assistantId: ownerId, extensionId }, body })));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="tool-test" aria-label={`Test ${tool.name}`}>
      <TextArea label="Test arguments (JSON)" rows={3} value={args} onChange={(e) => setArgs(e.target.value)} hint="The saved tool is called with these, as the LLM would call it" />
      <button type="button" onClick={() => void send()} disabled={busy}>{busy ? 'Sending…' : 'Send test request'}</button>
      <ErrorBox error={error} />
      {result && (
        <div className="test-result" role="status">
          <dl className="facts">
            <dt>Outcome</dt><dd className={result.ok ? 'good' : 'bad'}>{result.outcome}</dd>
            <dt>Status</dt><dd>{result.statusCode ?? 'no answer'}</dd>
            <dt>Latency</dt><dd>{result.latencyMs} ms</dd>
          </dl>
          {result.body !== null && <pre className="body" tabIndex={0} aria-label="Response body">{result.body}</pre>}
        </div>
      )}
    </section>
  );
}
