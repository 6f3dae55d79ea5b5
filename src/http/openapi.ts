import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';

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
};
