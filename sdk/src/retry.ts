/** How a refused request (429 Too Many Requests, 503 Unavailable) is sent again. */
export interface RetryOptions {
  /** Retries after the first attempt; 0 sends each request once. Default 3. */
  retries?: number;
  /**
   * The longest wait honoured, in ms: an answer whose Retry-After asks for more is not waited for
   * (its error is thrown at once). Default 30,000.
   */
  maxDelayMs?: number;
  /** The wait when the answer has no Retry-After, doubled on each retry, in ms. Default 500. */
  baseDelayMs?: number;
}

/** The time the retries see: injectable, so a test runs the waits without waiting. */
export interface Timing {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

const RETRIED = new Set([429, 503]);

export const realTiming: Timing = {
  now: () => Date.now(),
  sleep: (ms, signal) => new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  }),
};

/**
 * How long to wait before retry number `retry` (0 for the first): Retry-After in seconds or as an
 * HTTP date, else the base delay doubled per retry; null when that is longer than `maxDelayMs`.
 */
export function retryDelay(response: Response, retry: number, options: Required<RetryOptions>, now: number): number | null {
  const header = response.headers.get('retry-after')?.trim();
  let ms: number | undefined;
  if (header && /^\d+$/.test(header)) ms = Number(header) * 1000;
  else if (header) {
    const at = Date.parse(header);
    if (!Number.isNaN(at)) ms = at - now;
  }
  const wait = Math.max(0, ms ?? options.baseDelayMs * 2 ** retry);
  return wait > options.maxDelayMs ? null : wait;
}

/**
 * A fetch that sends a request again, as it was, while the answer is a 429 or a 503 and the
 * retries last. The service refuses those before doing anything (a create repeated with its
 * Idempotency-Key is answered once in any case), so every method is retried.
 */
export function retrying(send: (request: Request) => Promise<Response>, options: RetryOptions, timing: Timing) {
  const settings: Required<RetryOptions> = { retries: 3, maxDelayMs: 30_000, baseDelayMs: 500, ...options };
  return async (request: Request): Promise<Response> => {
    for (let retry = 0; ; retry++) {
      const response = await send(retry < settings.retries ? request.clone() : request);
      if (!RETRIED.has(response.status) || retry >= settings.retries) return response;
      const wait = retryDelay(response, retry, settings, timing.now());
      if (wait === null) return response;
      await response.body?.cancel();
      await timing.sleep(wait, request.signal);
    }
  };
}
