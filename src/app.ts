import Fastify, { type FastifyInstance, type FastifyServerOptions, type RouteOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.ts';
import { openDatabase, type Db } from './db/database.ts';
import { migrate } from './db/migrate.ts';
import { dbPlugin } from './db/plugin.ts';
import { authPlugin } from './http/auth.ts';
import { ErrorEnvelope } from './http/envelope.ts';
import { frameworkErrors, registerErrorHandling } from './http/errors.ts';
import { registerJsonBody } from './http/json-body.ts';
import { loggerOptions } from './http/logging.ts';
import { metricsPlugin } from './http/metrics.ts';
import { systemRoutes } from './http/system.routes.ts';
import { traceIdOf } from './http/trace.ts';
import { registerValidation } from './http/validation.ts';
import { ensureAdminTokenHash } from './modules/tokens/admin-token.ts';
import { organizationRoutes } from './modules/organizations/organizations.routes.ts';
import { tokenRoutes } from './modules/tokens/tokens.routes.ts';
import { vendorRoutes } from './modules/vendors/vendors.routes.ts';
import { openApiOptions } from './http/openapi.ts';
import { idempotencyPlugin } from './http/idempotency.ts';
import { rateLimitPlugin } from './http/rate-limit.ts';
import { servicesPlugin } from './http/services.ts';
import { strategyRoutes } from './modules/strategies/strategies.routes.ts';
import { assistantRoutes } from './modules/assistants/assistants.routes.ts';
import { taskRoutes } from './modules/tasks/tasks.routes.ts';
import { unfinishedTasksGuard } from './modules/tasks/tasks.service.ts';
import { deleteGuards } from './modules/assistants/assistants.service.ts';
import { systemClock, type Clock } from './clock.ts';
import type { Dialer } from './jobs/dialer.ts';
import type { Scheduler } from './jobs/scheduler.ts';
import { createScheduler } from './jobs/worker.ts';

declare module 'fastify' {
  interface FastifyInstance {
    scheduler: Scheduler;
  }
}
import { sipCredentialRoutes } from './modules/sip/sip-credentials.routes.ts';
import { sipNumberRoutes } from './modules/sip/sip-numbers.routes.ts';
import { callsPlugin } from './modules/calls/calls.plugin.ts';
import { eventsPlugin } from './modules/events/events.plugin.ts';

export interface AppOptions {
  config: Config;
  /** An already-open database (tests, benchmarks); otherwise opened from config and closed with the app. */
  db?: Db;
  logger?: FastifyServerOptions['logger'];
  /** Where a generated admin token is shown, once. */
  announceAdminToken?: (token: string) => void;
  clock?: Clock;
  dialer?: Dialer;
  /** Start the scheduler's polling loop with the app (tests drive `app.scheduler.tick()` instead). */
  runScheduler?: boolean;
  /** Sees every route as it is added (the tenant-isolation test builds its matrix from them). */
  onRoute?: (route: RouteOptions) => void;
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config } = options;
  const db = options.db ?? openDatabase(config.database);
  await migrate(db);
  const adminTokenHash = await ensureAdminTokenHash(db, config.adminToken, options.announceAdminToken ?? (() => {}));

  const app = Fastify({
    logger: options.logger ?? loggerOptions(config.logLevel),
    genReqId: traceIdOf,
    bodyLimit: config.bodyLimit,
    routerOptions: { maxParamLength: 200 },
    frameworkErrors,
  }).withTypeProvider<TypeBoxTypeProvider>();
  if (options.onRoute) app.addHook('onRoute', options.onRoute);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // JSON only: a text/plain body is a 415, not a string that fails validation later.
  app.removeContentTypeParser('text/plain');
  registerJsonBody(app);
  registerValidation(app);
  registerErrorHandling(app);
  app.addSchema(ErrorEnvelope);

  await app.register(swagger, openApiOptions);
  await app.register(swaggerUi, { routePrefix: '/docs' });
  await app.register(dbPlugin, { db, closeOnShutdown: !options.db });
  await app.register(servicesPlugin, { config });
  await app.register(metricsPlugin);
  await app.register(authPlugin, { db, adminTokenHash });
  await app.register(rateLimitPlugin, { db, clock: options.clock ?? systemClock, limit: config.rateLimitPerMinute, windowMs: 60_000 });
  await app.register(idempotencyPlugin, { db, box: app.secrets });

  await app.register(systemRoutes);
  await app.register(vendorRoutes);
  await app.register(organizationRoutes);
  await app.register(tokenRoutes);
  await app.register(strategyRoutes);
  await app.register(assistantRoutes, { kind: 'assistant' });
  await app.register(assistantRoutes, { kind: 'agent' });

  deleteGuards.add(unfinishedTasksGuard);
  const clock = options.clock ?? systemClock;
  const scheduler = createScheduler(config, db, app.log, { clock, ...(options.dialer ? { dialer: options.dialer } : {}) });
  app.decorate('scheduler', scheduler);
  await app.register(taskRoutes, { clock, defaultMaxAttempts: config.taskMaxAttempts, abortRunning: (id) => scheduler.abort(id) });
  if (options.runScheduler) app.addHook('onReady', async () => scheduler.start());
  app.addHook('preClose', async () => scheduler.stop());
  await app.register(sipCredentialRoutes);
  await app.register(sipNumberRoutes);
  await app.register(callsPlugin, { clock });
  await app.register(eventsPlugin, { clock, run: options.runScheduler === true });
  return app;
}
