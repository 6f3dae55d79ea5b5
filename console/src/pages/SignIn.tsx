import { useState, type FormEvent } from 'react';
import { useLocation, useNavigate } from 'react-router';
import { ErrorBox, TextField } from '../components/form';
import { useTitle } from '../hooks';
import { useSessionState } from '../session';

export function SignIn() {
  useTitle('Sign in');
  const { signIn } = useSessionState();
  const navigate = useNavigate();
  const location = useLocation();
  const [token, setToken] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signIn(token.trim());
      const from = (location.state as { from?: string } | null)?.from;
      void navigate(from && from !== '/signin' ? from : '/', { replace: true });
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
