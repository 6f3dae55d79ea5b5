import type { DialOutcome } from '../../telephony/dialer.ts';
import type { TaskStatus } from './tasks.schemas.ts';

/** The outcome names kept on a task's attempts (the API lists them). */
export const ATTEMPT_OUTCOMES = ['completed', 'no_answer', 'busy', 'declined', 'invalid_number', 'failed', 'lease_expired', 'cancelled'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

/**
 * What an outcome means for the task. No answer, busy and transient failures are worth
 * another try; a decline (SIP 603), an invalid number or a hard failure are not: calling
 * again would annoy the person or fail the same way.
 */
export function judge(outcome: DialOutcome): { status: TaskStatus | 'RETRY'; error: string | null } {
  const sip = outcome.sipCode ? ` (SIP ${outcome.sipCode})` : '';
  switch (outcome.status) {
    case 'completed':
      return { status: 'COMPLETED', error: null };
    case 'no_answer':
      return { status: 'RETRY', error: `no answer${sip}` };
    case 'busy':
      return { status: 'RETRY', error: `busy${sip}` };
    case 'declined':
      return { status: 'FAILED', error: `declined${sip}` };
    case 'invalid_number':
      return { status: 'FAILED', error: `invalid number${sip}` };
    case 'failed':
      return { status: outcome.retryable ? 'RETRY' : 'FAILED', error: `${outcome.error}${sip}` };
  }
}
