/** `{{ name }}` as the service fills it from userValues (spaces inside the braces allowed). */
const PLACEHOLDER = /\{\{\s*([^{}]+?)\s*\}\}/g;

/** The text with each {{placeholder}} marked, so a user sees what a call will fill in. */
export function Placeholders({ text, label }: { text: string; label: string }) {
  if (!text) return null;
  const parts: (string | { name: string; raw: string })[] = [];
  let last = 0;
  for (const match of text.matchAll(PLACEHOLDER)) {
    parts.push(text.slice(last, match.index), { name: match[1] ?? '', raw: match[0] });
    last = match.index + match[0].length;
  }
  parts.push(text.slice(last));
  const names = [...new Set(parts.flatMap((p) => (typeof p === 'string' ? [] : [p.name])))];
  return (
    <div className="placeholders">
      <p className="preview" aria-label={`${label} preview`}>
        {parts.map((p, i) => (typeof p === 'string' ? p : <mark key={i} className="placeholder" title="Filled from userValues">{p.raw}</mark>))}
      </p>
      {names.length > 0 && <small className="hint">Filled from userValues: {names.join(', ')}</small>}
    </div>
  );
}
