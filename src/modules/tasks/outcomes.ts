import type { DialOutcome } from '../../telephony/dialer.ts';
import type { TaskStatus } from './tasks.schemas.ts';

/** The outcome names kept on a task's attempts (the API lists them). */
export const ATTEMPT_OUTCOMES = [
  'completed', 'voicemail', 'voicemail_left', 'no_answer', 'busy', 'declined', 'invalid_number', 'failed', 'lease_expired', 'cancelled',
] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

/** Outcomes that count towards PARLEY_TASK_MAX_VOICEMAILS. */
export const VOICEMAIL_OUTCOMES: readonly AttemptOutcome[] = ['voicemail', 'voicemail_left'];

/** How many times the task has reached voicemail, this attempt included, and how many it may. */
export interface VoicemailCount {
  reached: number;
  max: number;
}

/**
 * What an outcome means for the task. No answer, busy, a voicemail box and transient failures
 * are worth another try; a decline (SIP 603), an invalid number or a hard failure are not:
 * calling again would annoy the person or fail the same way. A message left completes the task
 * unless the agent asked to try again; voicemail reached PARLEY_TASK_MAX_VOICEMAILS times
 * ends it (FAILED without a message, COMPLETED with one).
 */
export function judge(outcome: DialOutcome, voicemails: VoicemailCount = { reached: 0, max: Infinity }): { status: TaskStatus | 'RETRY'; error: string | null } {
  const sip = outcome.sipCode ? ` (SIP ${outcome.sipCode})` : '';
  const enough = voicemails.reached >= voicemails.max;
  const times = `reached voicemail ${voicemails.reached} ${voicemails.reached === 1 ? 'time' : 'times'}, the most PARLEY_TASK_MAX_VOICEMAILS allows`;
  switch (outcome.status) {
    case 'completed':
      return { status: 'COMPLETED', error: null };
    case 'voicemail':
      return enough ? { status: 'FAILED', error: `voicemail, no message left; ${times}` } : { status: 'RETRY', error: 'voicemail, no message left' };
    case 'voicemail_left':
      return outcome.retry && !enough ? { status: 'RETRY', error: 'voicemail, message left; trying again as the agent asks' } : { status: 'COMPLETED', error: null };
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
