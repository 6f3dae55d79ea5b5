import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { FastifyRequest } from 'fastify';
import { Type, type TObject } from 'typebox';
import { IdempotencyKeyHeader } from './idempotency.ts';
import { forGenerators } from './openapi-components.ts';
import { publicBase } from './public-url.ts';

/** A create that honours Idempotency-Key says so in its parameters, so a client can send one. */
function withIdempotencyKey(schema: Record<string, unknown>): Record<string, unknown> {
  const headers = (schema.headers as TObject | undefined)?.properties ?? {};
  return { ...schema, headers: Type.Object({ ...headers, 'Idempotency-Key': Type.Optional(IdempotencyKeyHeader) }) };
}

export const openApiOptions: FastifyDynamicSwaggerOptions = {
  openapi: {
    openapi: '3.1.0',
    info: {
      title: 'Parley API',
      version: '1.0.0',
      description:
        'Self-hostable control plane for voice AI assistants. Every response is an envelope ' +
        '`{ success, message, data, timestamp, traceId }`; errors add `error: { code, details }`.\n\n' +
        'The call WebSocket and its frames are described by the AsyncAPI 3 document at [/asyncapi.json](/asyncapi.json).',
    },
    externalDocs: { description: 'The call WebSocket (AsyncAPI 3.0)', url: '/asyncapi.json' },
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'A `prl_` API token or the platform admin token' } },
    },
    security: [{ bearerAuth: [] }],
  },
  refResolver: {
    buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
  },
  transform: ({ schema, url, route }) => ({
    url,
    schema: route.config?.idempotent && schema ? withIdempotencyKey(schema as Record<string, unknown>) : schema,
  }),
  transformObject: (document) => ('openapiObject' in document ? forGenerators(document.openapiObject) : document.swaggerObject),
};

/**
 * The document as served: `servers` names where this service is reached (PARLEY_PUBLIC_URL, or
 * the origin the request came to), so a generated client or the reference UI needs no base URL.
 */
export function servedDocument<T extends object>(document: T, publicUrl: string | null, request: FastifyRequest): T {
  const { openapi, info, ...rest } = document as Record<string, unknown>;
  return { openapi, info, servers: [{ url: publicBase(publicUrl, request), description: 'This Parley service' }], ...rest } as T;
}
