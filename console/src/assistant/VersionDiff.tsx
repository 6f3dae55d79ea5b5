import { diffLines } from 'diff';
import type { Version } from '../api/types';

/** Read-only fields that differ between any two versions and say nothing about the change. */
const SKIPPED = new Set(['id', 'createdAt', 'updatedAt']);
/** Unchanged lines shown around a change; longer unchanged runs are folded. */
const CONTEXT = 3;

type Line = { kind: 'add' | 'del' | 'same'; text: string } | { kind: 'fold'; count: number };

function textOf(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

/** A line diff of two texts, unchanged runs folded to CONTEXT lines either side of a change. */
function linesOf(before: string, after: string): Line[] {
  const out: Line[] = [];
  const parts = diffLines(before, after);
  parts.forEach((part, index) => {
    const lines = part.value.replace(/\n$/, '').split('\n');
    if (part.added || part.removed) {
      for (const text of lines) out.push({ kind: part.added ? 'add' : 'del', text });
      return;
    }
    const head = index === 0 ? 0 : CONTEXT;
    const tail = index === parts.length - 1 ? 0 : CONTEXT;
    if (lines.length <= head + tail + 1) {
      for (const text of lines) out.push({ kind: 'same', text });
      return;
    }
    for (const text of lines.slice(0, head)) out.push({ kind: 'same', text });
    out.push({ kind: 'fold', count: lines.length - head - tail });
    for (const text of lines.slice(lines.length - tail)) out.push({ kind: 'same', text });
  });
  return out;
}

/** What differs between two versions' configurations, field by field, as line diffs. */
export function VersionDiff({ from, to }: { from: Version; to: Version }) {
  const a = from.configuration as Record<string, unknown>;
  const b = to.configuration as Record<string, unknown>;
  const fields = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((f) => !SKIPPED.has(f) && textOf(a[f]) !== textOf(b[f]));
  if (!fields.length) {
    return <p>No differences: version {to.number} has the configuration of version {from.number}.</p>;
  }
  return (
    <div className="diffs">
      <p>From version {from.number} to version {to.number}: {fields.length === 1 ? 'one field differs' : `${fields.length} fields differ`}.</p>
      {fields.map((field) => (
        <section key={field} aria-label={`Changes to ${field}`}>
          <h3><code>{field}</code></h3>
          <pre className="diff">
            {linesOf(textOf(a[field]), textOf(b[field])).map((line, i) => line.kind === 'fold'
              ? <span key={i} className="diff-fold">… {line.count} unchanged lines</span>
              : line.kind === 'add' ? <ins key={i}>+ {line.text}</ins>
                : line.kind === 'del' ? <del key={i}>- {line.text}</del>
                  : <span key={i}>{'  '}{line.text}</span>)}
          </pre>
        </section>
      ))}
    </div>
  );
}
