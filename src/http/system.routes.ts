import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ping, storageFull } from '../db/database.ts';
import { Envelope, envelope, errorResponse } from './envelope.ts';
import { AppError } from './errors.ts';
import { databaseTrouble } from './db-errors.ts';
import { servedDocument } from './openapi.ts';

const open = { auth: { scope: 'public' } } as const;
/** Health probes: no token, and never refused by the flood guard (http/flood.ts). */
const probe = { ...open, probe: true } as const;
const Status = Envelope(Type.Object({ status: Type.String() }, { title: 'ServiceStatus' }));
/** Where `GET /` leads: the web console (src/http/console.ts serves it; /docs is the API reference). */
export const HOME = '/console/';
/** /readyz answers within this long, whatever the database does. */
export const READY_TIMEOUT_MS = 1_000;

/** The home redirect, liveness, readiness, metrics and the OpenAPI document: no token needed. */
export const systemRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/', { config: open, schema: { hide: true } }, async (_request, reply) => reply.redirect(HOME));

  app.get('/healthz', {
    config: probe,
    schema: { tags: ['System'], operationId: 'getHealth', summary: 'The process is up', response: { 200: { ...Status, description: 'The process is up' } } },
  }, async (request) => envelope(request, { status: 'ok' }));

  app.get('/readyz', {
    config: probe,
    schema: {
      tags: ['System'], operationId: 'getReadiness', summary: 'The database answers (within a second)',
      response: {
        200: { ...Status, description: 'The database answered' },
        503: errorResponse(503),
      },
    },
  }, async (request, reply) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('the database did not answer within a second')), READY_TIMEOUT_MS);
    });
    const { db, config, clock } = app.ctx;
    let full: boolean;
    try {
      await Promise.race([ping(db), timeout]);
      full = app.diskFull.recent(clock.now()) || (await Promise.race([storageFull(db, config.database), timeout]));
    } catch (err) {
      const trouble = databaseTrouble(err);
      request.log.warn({ err, trouble: trouble?.reason }, 'readiness check failed');
      full = trouble?.reason === 'disk_full';
      if (!full) {
        reply.header('retry-after', '5');
        throw new AppError(503, 'Database unreachable');
      }
    } finally {
      clearTimeout(timer);
    }
    if (full) {
      request.log.error('readiness check: the database disk is full');
      reply.header('retry-after', '5');
      throw new AppError(503, 'Database unavailable: the disk is full');
    }
    return envelope(request, { status: 'ready' });
  });

  app.get('/metrics', { config: open, schema: { hide: true } }, async (_request, reply) => {
    reply.type(app.metrics.contentType);
    return app.metrics.metrics();
  });

  app.get('/openapi.json', { config: open, schema: { hide: true } }, async (request) => servedDocument(app.swagger(), app.ctx.config.publicUrl, request));
};
