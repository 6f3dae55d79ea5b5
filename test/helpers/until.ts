import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `read` until `done` holds for its value and answers that value; fails, naming `what` and
 * the last value, after a deadline that only a broken run reaches.
 */
export async function until<T>(what: string, read: () => T | Promise<T>, done: (value: T) => boolean, deadlineMs = 20_000, intervalMs = 50): Promise<T> {
  const end = performance.now() + deadlineMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (performance.now() > end) throw new Error(`${what}: still ${JSON.stringify(value)} after ${deadlineMs} ms`);
    await sleep(intervalMs);
  }
}
