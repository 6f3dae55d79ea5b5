export interface RetryPolicy {
  /** Delay after the first failed attempt; doubles with each further one. */
  baseMs: number;
  capMs: number;
}

export function backoffMs(policy: RetryPolicy, attempt: number): number {
  return Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, attempt - 1));
}
