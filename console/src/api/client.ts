import createClient from 'openapi-fetch';
import type { paths } from './schema';

/** The typed client of the public API; every path and body is checked against the service's OpenAPI document. */
export type Api = ReturnType<typeof createClient<paths>>;

export interface FieldError {
  path: string;
  message: string;
}

/** An error envelope from the API, kept whole so a form can show each detail at its field. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: FieldError[];
  constructor(status: number, message: string, code: string, details: FieldError[]) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

export function createApi(token: () => string | null, onUnauthorized: () => void): Api {
  const api = createClient<paths>({ baseUrl: '' });
  api.use({
    onRequest({ request }) {
      const value = token();
      if (value) request.headers.set('authorization', `Bearer ${value}`);
      return request;
    },
    onResponse({ response }) {
      if (response.status === 401) onUnauthorized();
      return response;
    },
  });
  return api;
}

interface ErrorBody {
  message?: string;
  error?: { code?: string; details?: FieldError[] };
}

/** The success envelope of a call, or an ApiError carrying the error envelope's code and field details. */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (data !== undefined && response.ok) return data;
  const body = (error ?? {}) as ErrorBody;
  throw new ApiError(response.status, body.message ?? `HTTP ${response.status}`, body.error?.code ?? 'UNKNOWN', body.error?.details ?? []);
}

/** The `data` of a success envelope. */
export async function data<T>(call: Promise<{ data?: { data: T }; error?: unknown; response: Response }>): Promise<T> {
  return (await ok(call)).data;
}

export function errorText(error: unknown): string {
  if (error instanceof ApiError) return `${error.message} (${error.status} ${error.code})`;
  return error instanceof Error ? error.message : String(error);
}
