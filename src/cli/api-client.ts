import { createParley, ParleyError, type ParleyClient } from '@parley/sdk';

/**
 * The API as `parley setup` and `parley chat` reach it: the SDK (@parley/sdk), with the CLI's
 * words for what goes wrong (the service not reachable, an answer that is not Parley's).
 */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(message: string, readonly status: number | null) {
    super(message);
  }
}

export interface ApiClient {
  readonly baseUrl: string;
  readonly parley: ParleyClient;
}

const TIMEOUT_MS = 30_000;

export function createApiClient(baseUrl: string, token: string | null): ApiClient {
  const reach = async (request: Request) => {
    try {
      return await fetch(request);
    } catch (err) {
      if (request.signal.aborted) throw err;
      const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err instanceof Error ? err.message : String(err));
      throw new ApiError(`Cannot reach Parley at ${baseUrl} (${cause}). Is parley serve running there? (PARLEY_URL or --url names it)`, null);
    }
  };
  return { baseUrl, parley: createParley({ baseUrl, token, fetch: reach, timeoutMs: TIMEOUT_MS }) };
}

/** "Validation failed (HTTP 400 VALIDATION_FAILED)" and one line per field detail. */
export function apiMessage(err: ParleyError, baseUrl?: string): string {
  if (/^HTTP_\d+$/.test(err.code)) return `${baseUrl ?? 'The service'} answered HTTP ${err.status} without a Parley envelope: is it the Parley service?`;
  const details = err.details.map((d) => `\n  ${d.path}: ${d.message}`).join('');
  return `${err.message} (HTTP ${err.status} ${err.code})${details}`;
}

export { ParleyError };
