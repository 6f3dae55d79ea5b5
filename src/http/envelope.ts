import { Type, type TSchema } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CODES, type ErrorStatus } from './errors.ts';

const timestamp = Type.String({ format: 'date-time', description: 'Response time' });
const traceId = Type.String({ description: 'Correlation id, also in the X-Request-Id header' });

export const Envelope = <T extends TSchema>(data: T) =>
  Type.Object({
    success: Type.Boolean(),
    message: Type.Optional(Type.String()),
    data,
    timestamp,
    traceId,
  });

export const EmptyEnvelope = Envelope(Type.Null());

export const PageEnvelope = <T extends TSchema>(item: T) =>
  Type.Object({
    success: Type.Boolean(),
    data: Type.Array(item),
    page: Type.Integer({ minimum: 0 }),
    size: Type.Integer({ minimum: 1 }),
    totalElements: Type.Integer({ minimum: 0 }),
    totalPages: Type.Integer({ minimum: 0 }),
    timestamp,
    traceId,
  });

export const ErrorEnvelope = Type.Object(
  {
    success: Type.Literal(false),
    message: Type.String(),
    data: Type.Null(),
    timestamp,
    traceId,
    error: Type.Object({
      code: Type.String({ enum: Object.values(ERROR_CODES) }),
      details: Type.Array(Type.Object({ path: Type.String(), message: Type.String() })),
    }),
  },
  { $id: 'ErrorEnvelope', title: 'Error' },
);

const ErrorRef = Type.Ref('ErrorEnvelope');

/** Response schemas for a route: its success shape plus the error envelope for each status it can give. */
export function responses<T extends TSchema>(
  okStatus: 200 | 201,
  ok: T,
  errors: ErrorStatus[] = [],
): Record<number, TSchema> {
  const out: Record<number, TSchema> = { [okStatus]: ok };
  // Any route may meet these; creates also take Idempotency-Key (409 while running, 422 on reuse).
  const always: ErrorStatus[] = [400, 401, 403, 404, 413, 415, 429, 500];
  const creates: ErrorStatus[] = okStatus === 201 ? [409, 422] : [];
  for (const status of [...always, ...creates, ...errors]) out[status] = ErrorRef;
  return out;
}

/** The response time, from the app's one clock. */
export const stamp = (request: FastifyRequest): string => request.server.ctx.clock.now().toISOString();

export function envelope<T>(request: FastifyRequest, data: T, message?: string) {
  return {
    success: true,
    ...(message ? { message } : {}),
    data,
    timestamp: stamp(request),
    traceId: request.id,
  };
}

export function sendCreated<T>(request: FastifyRequest, reply: FastifyReply, location: string, data: T) {
  return reply.code(201).header('location', location).send(envelope(request, data, 'Created'));
}
