import { ApiError } from '../api/client';
import { ErrorBox } from '../components/form';

/**
 * A failed change, in words: the API's 409 (a number an assistant uses, credentials a number
 * uses) says what holds it, and `advice` says what to do; any other error as usual.
 */
export function Refusal({ error, advice }: { error: unknown; advice: string }) {
  if (error instanceof ApiError && error.status === 409) {
    return <p className="error-box" role="alert">Not deleted: {error.message}. {advice}</p>;
  }
  return <ErrorBox error={error} />;
}
