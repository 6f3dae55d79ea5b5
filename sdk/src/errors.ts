/** A field the API names in a 4xx: `extensions[1].parameters.schema` and what is wrong with it. */
export interface ErrorDetail {
  path: string;
  message: string;
}

interface ErrorEnvelope {
  success?: unknown;
  message?: unknown;
  traceId?: unknown;
  error?: { code?: unknown; details?: unknown };
}

const isEnvelope = (body: unknown): body is ErrorEnvelope => typeof body === 'object' && body !== null && 'success' in body;

/**
 * An answer of the API that is not a success, with the error envelope's parts: the HTTP `status`,
 * the stable `code` (`VALIDATION_FAILED`, `NOT_FOUND`…), the field `details`, and the `traceId`
 * the service logged the request under. An answer without the envelope (a proxy's 502 page) gets
 * the code `HTTP_<status>` and its trace id from `X-Request-Id`, when there is one.
 */
export class ParleyError extends Error {
  override readonly name = 'ParleyError';
  readonly status: number;
  readonly code: string;
  readonly details: ErrorDetail[];
  readonly traceId: string | null;

  constructor(status: number, code: string, message: string, details: ErrorDetail[] = [], traceId: string | null = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
    this.traceId = traceId;
  }

  /** The error of a response whose body was read as `body` (parsed JSON, or the text). */
  static of(response: Response, body: unknown): ParleyError {
    const headerTrace = response.headers.get('x-request-id');
    if (!isEnvelope(body)) {
      return new ParleyError(response.status, `HTTP_${response.status}`, `HTTP ${response.status} without a Parley envelope`, [], headerTrace);
    }
    const details = Array.isArray(body.error?.details) ? (body.error.details as ErrorDetail[]) : [];
    return new ParleyError(
      response.status,
      typeof body.error?.code === 'string' ? body.error.code : `HTTP_${response.status}`,
      typeof body.message === 'string' ? body.message : `HTTP ${response.status}`,
      details,
      typeof body.traceId === 'string' ? body.traceId : headerTrace,
    );
  }
}
