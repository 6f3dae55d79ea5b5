import { useState, type FormEvent } from 'react';
import { ErrorBox, TextField } from '../components/form';
import { useTitle } from '../hooks';
import { useSessionState } from '../session';

export function SignIn() {
  useTitle('Sign in');
  const { signIn } = useSessionState();
  const [token, setToken] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      // Signed in, the app's /signin route sends the user on to where they were going.
      await signIn(token.trim());
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" className="signin">
      <h1>Parley console</h1>
      <form onSubmit={(e) => void submit(e)}>
        <TextField
          label="API token"
          type="password"
          autoComplete="off"
          required
          value={token}
          onChange={(e) => setToken(e.target.value)}
          hint="A prl_… API token, or the platform admin token. It is kept in this tab only, and forgotten when the tab closes."
        />
        <button type="submit" className="primary" disabled={busy || !token.trim()}>Sign in</button>
        <ErrorBox error={error} />
      </form>
    </main>
  );
}
