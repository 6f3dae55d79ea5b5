/**
 * The HTTP client of `parley setup` and `parley chat`: JSON in and out with a bearer token,
 * answering the envelope's `data`, and failing with the API's own message and field details.
 */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(message: string, readonly status: number | null) {
    super(message);
  }
}

export interface ApiAnswer<T> {
  status: number;
  data: T;
  /** A page's position, for lists. */
  totalPages?: number;
}

export interface ApiClient {
  readonly baseUrl: string;
  request<T>(method: string, path: string, body?: unknown): Promise<ApiAnswer<T>>;
}

const TIMEOUT_MS = 30_000;

interface Envelope {
  success?: boolean;
  message?: string;
  data?: unknown;
  totalPages?: number;
  error?: { code?: string; details?: { path?: string; message?: string }[] };
}

export function createApiClient(baseUrl: string, token: string | null): ApiClient {
  return {
    baseUrl,
    async request<T>(method: string, path: string, body?: unknown): Promise<ApiAnswer<T>> {
      let res: Response;
      try {
        res = await fetch(baseUrl + path, {
          method,
          headers: {
            ...(token ? { authorization: `Bearer ${token}` } : {}),
            ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
      } catch (err) {
        const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err instanceof Error ? err.message : String(err));
        throw new ApiError(`Cannot reach Parley at ${baseUrl} (${cause}). Is parley serve running there? (PARLEY_URL or --url names it)`, null);
      }
      const text = await res.text();
      let answer: Envelope;
      try {
        answer = JSON.parse(text) as Envelope;
      } catch {
        throw new ApiError(`${method} ${baseUrl}${path} answered HTTP ${res.status} without a Parley envelope: is ${baseUrl} the Parley service?`, res.status);
      }
      if (!res.ok || answer.success === false) throw new ApiError(apiMessage(res.status, answer), res.status);
      return { status: res.status, data: answer.data as T, ...(answer.totalPages !== undefined ? { totalPages: answer.totalPages } : {}) };
    },
  };
}

/** "Validation failed (HTTP 400 VALIDATION_FAILED)" and one line per field detail. */
function apiMessage(status: number, answer: Envelope): string {
  const code = answer.error?.code ? ` ${answer.error.code}` : '';
  const details = (answer.error?.details ?? []).map((d) => `\n  ${d.path ?? ''}: ${d.message ?? ''}`).join('');
  return `${answer.message ?? 'The request failed'} (HTTP ${status}${code})${details}`;
}
