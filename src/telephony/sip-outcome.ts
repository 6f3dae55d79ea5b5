import type { OutboundResult } from '../sip/outbound.ts';
import type { DialOutcome } from './dialer.ts';

/**
 * A call that was not answered, as a task outcome (docs/sip.md, "Outcomes"): 486/600 busy,
 * 408/480 and a ring timeout no answer, 603 declined, 404/484/604 invalid number, 5xx and
 * failures to reach the trunk retryable, any other refusal (403, 488...) a failure not retried,
 * since calling again would be refused the same way.
 */
export function unansweredOutcome(result: Exclude<OutboundResult, { outcome: 'answered' }>): DialOutcome {
  switch (result.outcome) {
    case 'rejected': {
      const sipCode = result.status;
      if (sipCode === 486 || sipCode === 600) return { status: 'busy', sipCode };
      if (sipCode === 408 || sipCode === 480) return { status: 'no_answer', sipCode };
      if (sipCode === 603) return { status: 'declined', sipCode };
      if (sipCode === 404 || sipCode === 484 || sipCode === 604) return { status: 'invalid_number', sipCode };
      return { status: 'failed', error: `the trunk refused the call: ${result.reason || 'no reason'}`, retryable: sipCode >= 500 && sipCode < 600, sipCode };
    }
    case 'cancelled':
      return result.by === 'ring-timeout'
        ? { status: 'no_answer', ...(result.status ? { sipCode: result.status } : {}) }
        : { status: 'failed', error: 'cancelled while ringing', retryable: false, ...(result.status ? { sipCode: result.status } : {}) };
    case 'failed':
      return { status: 'failed', error: `the trunk could not be reached (${result.reason}): ${result.message}`, retryable: result.reason !== 'egress-refused' };
  }
}
