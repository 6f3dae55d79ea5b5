/** What the task runner asks of whatever places the call. */
export interface DialRequest {
  taskId: string;
  organizationId: string;
  agentId: string;
  targetNumber: string;
  userValues: Record<string, unknown>;
  /** The SIP credentials the call goes out through, when the agent has a telephone number. */
  sipCredentialId: string | null;
  attempt: number;
  /** Aborted when the task is cancelled or this worker loses its lease: hang up. */
  signal: AbortSignal;
}

/**
 * How an attempt ended; `callId` and `sipCode` are kept on the task's attempt record when known.
 * `voicemail`: a voicemail box (or a screening assistant that ended the call) answered and no
 * message was left; `voicemail_left`: the agent's message was left on it (`retry` when the
 * agent's voicemail_detection asks for another try all the same).
 */
export type DialOutcome = (
  | { status: 'completed'; conclusionId?: string | null }
  | { status: 'voicemail'; conclusionId?: string | null }
  | { status: 'voicemail_left'; retry: boolean; conclusionId?: string | null }
  | { status: 'no_answer' }
  | { status: 'busy' }
  | { status: 'declined' }
  | { status: 'invalid_number' }
  | { status: 'failed'; error: string; retryable: boolean }
) & { sipCode?: number; callId?: string };

export interface Dialer {
  readonly name: string;
  dial(request: DialRequest): Promise<DialOutcome>;
}

/**
 * The dialer when none is configured: it places no call and says so, so that nothing pretends a
 * call was made. Attempts fail at once with a clear lastError and are not retried.
 */
export const noDialer: Dialer = {
  name: 'none',
  dial: async () => ({ status: 'failed', error: 'no dialer configured', retryable: false }),
};
