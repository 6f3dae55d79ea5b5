import { useRef, useState } from 'react';
import { Status } from '../components/form';

/** The new token's value, shown this once, with a copy button. */
export function NewSecret({ name, token, onDone }: { name: string; token: string; onDone: () => void }) {
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<string | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(token);
      setCopied('Copied to the clipboard.');
    } catch {
      // No clipboard (a page over plain http, or permission refused): select it for Ctrl+C instead.
      field.current?.select();
      setCopied('The browser did not let the page copy: the token is selected, press Ctrl+C (⌘C) to copy it.');
    }
  };
  return (
    <section className="card" aria-labelledby="new-token">
      <h2 id="new-token">Token &ldquo;{name}&rdquo; created</h2>
      <p><strong>Copy it now: you will not see it again.</strong> Parley keeps only a hash of it, and its start to recognise it.</p>
      <div className="row">
        <input ref={field} readOnly value={token} aria-label="The new token" size={60} spellCheck={false} onFocus={(e) => e.target.select()} />
        <button type="button" className="primary" onClick={() => void copy()}>Copy</button>
        <button type="button" onClick={onDone}>Done, I have copied it</button>
      </div>
      {copied && <Status>{copied}</Status>}
    </section>
  );
}
