import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DiskFullAlarm, databaseTrouble } from './db-errors.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** When a write last failed on a full disk (/readyz reports it). */
    diskFull: DiskFullAlarm;
  }
}

export const ERROR_CODES = {
  400: 'VALIDATION_FAILED',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  408: 'REQUEST_TIMEOUT',
  409: 'CONFLICT',
  412: 'PRECONDITION_FAILED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  416: 'RANGE_NOT_SATISFIABLE',
  422: 'IDEMPOTENCY_KEY_REUSED',
  429: 'RATE_LIMITED',
  431: 'HEADERS_TOO_LARGE',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
} as const;

export type ErrorStatus = keyof typeof ERROR_CODES;
export interface ErrorDetail {
  path: string;
  message: string;
}

/** The one error type the code throws on purpose; anything else becomes a 500. */
export class AppError extends Error {
  constructor(
    readonly status: ErrorStatus,
    message: string,
    readonly details: ErrorDetail[] = [],
  ) {
    super(message);
  }
  get code(): string {
    return ERROR_CODES[this.status];
  }
}

export const badRequest = (message: string, details: ErrorDetail[] = []) => new AppError(400, message, details);
export const notFound = (what: string) => new AppError(404, `${what} not found`);
export const conflict = (message: string, details: ErrorDetail[] = []) => new AppError(409, message, details);
export const forbidden = (message = 'Insufficient permissions') => new AppError(403, message);
export const unauthorized = (message = 'Missing or invalid token') => new AppError(401, message);

/** `/extensions/1/parameters/schema` → `extensions[1].parameters.schema` */
export function jsonPointerToPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part), '');
}

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
  /** With Ajv's `verbose`: the schema holding the failed keyword. */
  parentSchema?: { oneOf?: { properties?: Record<string, { const?: unknown }> }[] };
}

const listed = (values: unknown[]) => values.map((v) => JSON.stringify(v)).join(', ');

export function validationDetails(errors: AjvError[]): ErrorDetail[] {
  return errors.map((e) => {
    let path = jsonPointerToPath(e.instancePath);
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'enum' && Array.isArray(e.params.allowedValues)) {
      message = `must be one of: ${listed(e.params.allowedValues)}`;
    } else if (e.keyword === 'const') {
      message = `must be ${JSON.stringify(e.params.allowedValue)}`;
    } else if (e.keyword === 'discriminator') {
      // An unknown (or missing) `type` of a schema told apart by its type: name the known ones.
      const tag = String(e.params.tag);
      const known = (e.parentSchema?.oneOf ?? []).map((branch) => branch.properties?.[tag]?.const).filter((v) => v !== undefined);
      path = [path, tag].filter(Boolean).join('.');
      message = known.length ? `must be one of: ${listed(known)}` : message;
    } else if (e.keyword === 'additionalProperties') {
      path = [path, String(e.params.additionalProperty)].filter(Boolean).join('.');
      message = 'is not an allowed field';
    } else if (e.keyword === 'required') {
      path = [path, String(e.params.missingProperty)].filter(Boolean).join('.');
      message = 'is required';
    }
    return { path: path || '(root)', message };
  });
}

/** The error envelope; every error the service answers has this shape. */
export function errorEnvelope(error: AppError, traceId: string, at: Date) {
  return {
    success: false,
    message: error.message,
    data: null,
    timestamp: at.toISOString(),
    traceId,
    error: { code: error.code, details: error.details },
  };
}

function errorBody(request: FastifyRequest, error: AppError) {
  // The router's own errors can come before the app is decorated; fall back to the system clock there.
  return errorEnvelope(error, request.id, request.server?.ctx?.clock.now() ?? new Date());
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: AppError) {
  return reply.code(error.status).send(errorBody(request, error));
}

/** Fastify's own errors, mapped by their stable code, never by message text. */
function fromFastifyError(error: FastifyError): AppError | null {
  if (error.validation) {
    return badRequest('Request validation failed', validationDetails(error.validation));
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError(413, 'Request body is larger than 1 MiB');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError(415, 'Content-Type must be application/json (or application/merge-patch+json for PATCH)');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return badRequest('Request body is not valid JSON');
    default:
      break;
  }
  // JSON syntax errors and prototype-poisoning rejections from the body parser.
  if (error instanceof SyntaxError || (error.statusCode === 400 && !error.code?.startsWith('FST_ERR_'))) {
    return badRequest('Request body is not valid JSON');
  }
  if (error.statusCode === 400) return badRequest('Bad request');
  return null;
}

/**
 * Constraint violations that a check-then-write can still meet under concurrency (a row
 * referenced or created between the check and the write) are conflicts, not server errors.
 */
function fromDatabaseError(error: { code?: unknown }): AppError | null {
  switch (error.code) {
    case '23503':
    case 'SQLITE_CONSTRAINT_FOREIGNKEY':
      return conflict('The resource is referenced by, or references, another that changed meanwhile');
    case '23505':
    case 'SQLITE_CONSTRAINT_UNIQUE':
    case 'SQLITE_CONSTRAINT_PRIMARYKEY':
      return conflict('A resource with the same unique values already exists');
    default:
      return null;
  }
}

/**
 * Errors the router raises before any hook runs (a malformed URL, a path parameter longer
 * than any id): answered in the envelope like everything else, instead of Fastify's own body.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  const message = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'A path parameter is too long' : 'The request URL is malformed';
  void sendError(request, reply, badRequest(message, [{ path: '(url)', message }]));
}

/**
 * The central error handler and the answer for requests no route takes: a 405 with `Allow` when
 * the path exists with other methods (`methodsOf`), else a 404.
 */
export function registerErrorHandling(app: FastifyInstance, methodsOf: (path: string) => string[]): void {
  app.decorate('diskFull', new DiskFullAlarm());
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const known = error instanceof AppError ? error : (fromFastifyError(error) ?? fromDatabaseError(error));
    if (known) return sendError(request, reply, known);
    const trouble = databaseTrouble(error);
    if (trouble) {
      // Not our bug: the database is away, full or overloaded. Say so, and when to try again.
      request.log.error({ err: error, trouble: trouble.reason }, trouble.reason === 'disk_full' ? 'database write failed: the disk is full' : `database ${trouble.reason}`);
      if (trouble.reason === 'disk_full') app.diskFull.note(app.ctx.clock.now());
      reply.header('retry-after', '5');
      return sendError(request, reply, new AppError(503, trouble.reason === 'disk_full' ? 'The service cannot store data right now (disk full); try again later' : 'The database is unavailable; try again shortly'));
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendError(request, reply, new AppError(500, 'Internal server error'));
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = methodsOf(path);
    if (!allowed.length) return sendError(request, reply, new AppError(404, `Route ${request.method} ${path} not found`));
    reply.header('allow', allowed.join(', '));
    return sendError(request, reply, new AppError(405, `${request.method} is not allowed on ${path}; use ${allowed.join(', ')}`, [{ path: '(method)', message: `must be one of: ${allowed.join(', ')}` }]));
  });
}
