import type { Timeline } from './timeline';

/** A call's timeline: what was said (and is being said), tool calls and their results. */
export function CallTimeline({ timeline: { entries, partials } }: { timeline: Timeline }) {
  return (
    <ol className="timeline" aria-label="Call timeline" aria-live="polite">
      {entries.map((e, i) => (
        <li key={i} className={`t-${e.kind}`}>
          <span className="t-at">{(e.at / 1000).toFixed(1)} s</span>
          {e.kind === 'assistant' && <span><strong>Assistant:</strong> {e.text}</span>}
          {e.kind === 'user' && <span><strong>You:</strong> {e.text}</span>}
          {e.kind === 'system' && <span className="note">{e.text}</span>}
          {e.kind === 'tool_call' && <span><strong>Tool call</strong> <code>{e.name}</code> <code>{e.arguments}</code></span>}
          {e.kind === 'tool_result' && (
            <span><strong>Tool result</strong> <code>{e.name}</code> <span className={e.ok ? 'good' : 'bad'}>{e.ok ? 'ok' : 'failed'}</span> {e.statusCode ?? 'no answer'} in {e.latencyMs} ms</span>
          )}
        </li>
      ))}
      {partials.user && <li className="t-user t-interim"><span className="t-at">…</span><span><strong>You:</strong> {partials.user}</span></li>}
      {partials.assistant && <li className="t-assistant"><span className="t-at">…</span><span><strong>Assistant:</strong> {partials.assistant}</span></li>}
    </ol>
  );
}
