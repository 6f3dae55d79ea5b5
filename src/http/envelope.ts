import { Type, type TSchema } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IsoTime } from '../clock.ts';
import { ERROR_CODES, type ErrorStatus } from './errors.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The app clock's time as the envelopes' `timestamp` text (decorated once by buildApp). */
    isoTime: IsoTime;
  }
}

const timestamp = Type.String({ format: 'date-time', description: 'Response time' });
const traceId = Type.String({ description: 'Correlation id, also in the X-Request-Id header' });

/** The component name of a schema (its title), or of a list of one. */
function nameOf(schema: TSchema): string | undefined {
  const { title, type, items } = schema as { title?: string; type?: string; items?: TSchema };
  if (title) return title;
  if (type === 'null') return 'Empty';
  const item = type === 'array' && items ? nameOf(items) : undefined;
  return item ? `${item}List` : undefined;
}

/** `{ success, message, data, timestamp, traceId }`; named `<Data>Envelope` in /openapi.json when its data is named. */
export const Envelope = <T extends TSchema>(data: T) => {
  const name = nameOf(data);
  return Type.Object(
    {
      success: Type.Boolean(),
      message: Type.Optional(Type.String()),
      data,
      timestamp,
      traceId,
    },
    name ? { title: `${name}Envelope` } : {},
  );
};

export const EmptyEnvelope = Envelope(Type.Null());

/** A page of a list; named `<Item>Page` in /openapi.json when its item is named. */
export const PageEnvelope = <T extends TSchema>(item: T) => {
  const name = nameOf(item);
  return Type.Object(
    {
      success: Type.Boolean(),
      data: Type.Array(item),
      page: Type.Integer({ minimum: 0 }),
      size: Type.Integer({ minimum: 1 }),
      totalElements: Type.Integer({ minimum: 0 }),
      totalPages: Type.Integer({ minimum: 0 }),
      timestamp,
      traceId,
    },
    name ? { title: `${name}Page` } : {},
  );
};

export const ErrorEnvelope = Type.Object(
  {
    success: Type.Literal(false),
    message: Type.String(),
    data: Type.Null(),
    timestamp,
    traceId,
    error: Type.Object({
      code: Type.String({ enum: Object.values(ERROR_CODES) }),
      details: Type.Array(Type.Object({ path: Type.String(), message: Type.String() }, { title: 'ErrorDetail' })),
    }, { title: 'ErrorBody' }),
  },
  { $id: 'ErrorEnvelope', title: 'ErrorEnvelope' },
);

/** What each error status means, as /openapi.json describes it. */
const ERROR_DESCRIPTIONS: Record<ErrorStatus, string> = {
  400: 'Invalid input: error.details names each field and what is wrong (VALIDATION_FAILED)',
  401: 'No token, or an unknown, revoked or expired one (UNAUTHORIZED)',
  403: 'The token may not do this on this vendor or organization (FORBIDDEN)',
  404: 'The vendor, organization or resource does not exist within your scope (NOT_FOUND)',
  405: 'The path exists, but not with this method; Allow lists those it has (METHOD_NOT_ALLOWED)',
  408: 'The request did not arrive whole within the request timeout; the connection is closed (REQUEST_TIMEOUT)',
  409: 'The current state forbids it (in use, a duplicate, still running…), or an Idempotency-Key request is still running (CONFLICT)',
  412: 'If-Match does not match the current ETag: read the resource again (PRECONDITION_FAILED)',
  413: 'The body is larger than 1 MiB (PAYLOAD_TOO_LARGE)',
  415: 'The body is not JSON (UNSUPPORTED_MEDIA_TYPE)',
  416: 'The Range asked for lies past the end; Content-Range names the size (RANGE_NOT_SATISFIABLE)',
  422: 'This Idempotency-Key was used with another body (IDEMPOTENCY_KEY_REUSED)',
  429: 'Too many requests; Retry-After says when to try again (RATE_LIMITED)',
  431: 'The request headers are larger than 16 KiB; the connection is closed (HEADERS_TOO_LARGE)',
  500: 'A fault of the service; the log has the cause under this traceId (INTERNAL)',
  503: 'The database is unavailable, or the service is busy sending answers slow clients have not read; Retry-After says when to try again (UNAVAILABLE)',
};

/** The error envelope, described for one status (in a route's own words, where the usual ones would mislead). */
export const errorResponse = (status: ErrorStatus, description = ERROR_DESCRIPTIONS[status]): TSchema => ({ ...Type.Ref('ErrorEnvelope'), description });

/**
 * Response schemas for a route: its success shape plus the error envelope for each status it can
 * give, every one with a description (OpenAPI would otherwise say "Default Response").
 */
export function responses<T extends TSchema>(
  okStatus: 200 | 201,
  ok: T,
  errors: ErrorStatus[] = [],
  okDescription = okStatus === 201 ? 'Created: the full resource; Location names its URL' : 'Success',
): Record<number, TSchema> {
  const out: Record<number, TSchema> = { [okStatus]: { ...ok, description: okDescription } };
  // Any route may meet these; creates also take Idempotency-Key (409 while running, 422 on reuse).
  const always: ErrorStatus[] = [400, 401, 403, 404, 413, 415, 429, 500];
  const creates: ErrorStatus[] = okStatus === 201 ? [409, 422] : [];
  for (const status of [...always, ...creates, ...errors]) out[status] = errorResponse(status);
  return out;
}

/** The response time, from the app's one clock. */
export const stamp = (request: FastifyRequest): string => request.server.isoTime.now();

export function envelope<T>(request: FastifyRequest, data: T, message?: string) {
  return {
    success: true,
    ...(message ? { message } : {}),
    data,
    timestamp: stamp(request),
    traceId: request.id,
  };
}

/**
 * Sends the success envelope around `dataJson`, data the route's own response schema has
 * serialised already (a read kept by version, see docs/performance.md): byte for byte what the
 * envelope schema gives for `envelope(request, data)`, without serialising the data again.
 * The trace id and the timestamp are JSON-safe by construction (http/trace.ts, ISO 8601) but
 * are escaped anyway.
 */
export function sendEnvelopeJson(request: FastifyRequest, reply: FastifyReply, dataJson: string) {
  return reply.type('application/json; charset=utf-8')
    .send(`{"success":true,"data":${dataJson},"timestamp":${JSON.stringify(stamp(request))},"traceId":${JSON.stringify(request.id)}}`);
}

/**
 * `json` as one flat string, for text kept and sent many times. A serialiser builds its output
 * by appending, and V8 keeps such a string as a tree of its pieces, walked again each time an
 * answer containing it is measured or copied (2 µs a request for an assistant of 2.7 kB); a string
 * decoded from bytes is one piece. (Sending the kept answer as bytes instead was measured too,
 * and costs more: Node then writes the headers and the body as two chunks.)
 */
export const flatJson = (json: string): string => Buffer.from(json).toString();

export function sendCreated<T>(request: FastifyRequest, reply: FastifyReply, location: string, data: T) {
  return reply.code(201).header('location', location).send(envelope(request, data, 'Created'));
}
