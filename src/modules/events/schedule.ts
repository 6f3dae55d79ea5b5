import { backoffMs, type RetryPolicy } from '../../jobs/backoff.ts';

/** Failed deliveries are retried for (at least) this long after the event, or after a redelivery. */
export const RETRY_WINDOW_MS = 24 * 60 * 60_000;

/** 5 s, 10 s, 20 s … doubling up to one hour: about 35 attempts in the 24 hours. */
const DELIVERY_RETRY: RetryPolicy = { baseMs: 5_000, capMs: 60 * 60_000 };

/** Up to this share is taken off each delay, so that deliveries failed together spread out. */
const JITTER = 0.2;

/**
 * When a delivery that just failed its `attempt`th attempt at `now` is tried next, or null when
 * its retry window has passed. The last retry happens at or after the window's end, so a
 * receiver is tried for at least the whole window.
 */
export function nextAttemptAt(now: Date, attempt: number, retryUntil: string, random: () => number = Math.random): Date | null {
  if (now.toISOString() >= retryUntil) return null;
  const delay = backoffMs(DELIVERY_RETRY, attempt) * (1 - JITTER * random());
  return new Date(now.getTime() + Math.round(delay));
}
