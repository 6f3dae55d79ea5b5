import type { DialOutcome } from './dialer.ts';
import type { TaskStatus } from '../modules/tasks/tasks.schemas.ts';

export interface RetryPolicy {
  /** Delay after the first failed attempt; doubles with each further one. */
  baseMs: number;
  capMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { baseMs: 60_000, capMs: 60 * 60_000 };

export function backoffMs(policy: RetryPolicy, attempt: number): number {
  return Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, attempt - 1));
}

/**
 * What an outcome means for the task. No answer, busy and transient failures are worth
 * another try; a decline (SIP 603), an invalid number or a hard failure are not: calling
 * again would annoy the person or fail the same way.
 */
export function judge(outcome: DialOutcome): { status: TaskStatus | 'RETRY'; error: string | null } {
  switch (outcome.status) {
    case 'completed':
      return { status: 'COMPLETED', error: null };
    case 'no_answer':
      return { status: 'RETRY', error: 'no answer' };
    case 'busy':
      return { status: 'RETRY', error: 'busy' };
    case 'declined':
      return { status: 'FAILED', error: `declined${outcome.sipCode ? ` (SIP ${outcome.sipCode})` : ''}` };
    case 'invalid_number':
      return { status: 'FAILED', error: `invalid number${outcome.sipCode ? ` (SIP ${outcome.sipCode})` : ''}` };
    case 'failed':
      return { status: outcome.retryable ? 'RETRY' : 'FAILED', error: outcome.error };
  }
}
