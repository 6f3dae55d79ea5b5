import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ping } from '../db/database.ts';
import { Envelope, envelope } from './envelope.ts';
import { AppError } from './errors.ts';

const open = { auth: { scope: 'public' } } as const;
const Status = Envelope(Type.Object({ status: Type.String() }));

/** Liveness, readiness, metrics and the OpenAPI document: no token needed. */
export const systemRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/healthz', {
    config: open,
    schema: { tags: ['System'], summary: 'The process is up', response: { 200: Status } },
  }, async (request) => envelope(request, { status: 'ok' }));

  app.get('/readyz', {
    config: open,
    schema: { tags: ['System'], summary: 'The database is reachable', response: { 200: Status, 503: Type.Ref('ErrorEnvelope') } },
  }, async (request) => {
    try {
      await ping(app.db);
    } catch (err) {
      request.log.warn({ err }, 'readiness check failed');
      throw new AppError(503, 'Database unreachable');
    }
    return envelope(request, { status: 'ready' });
  });

  app.get('/metrics', { config: open, schema: { hide: true } }, async (_request, reply) => {
    reply.type(app.metrics.contentType);
    return app.metrics.metrics();
  });

  app.get('/openapi.json', { config: open, schema: { hide: true } }, async () => app.swagger());
};
