import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { IsoTime } from './clock.ts';
import type { Context } from './context.ts';
import { migrate } from './db/migrate.ts';
import { AuthCache } from './http/auth-cache.ts';
import { authPlugin, type Principal } from './http/auth.ts';
import { limitUnflushedOutput } from './http/backpressure.ts';
import { clientErrorHandler } from './http/client-errors.ts';
import { HEADERS_TIMEOUT_MS, TIMEOUT_SWEEP_MS, closeAfterEarlyErrors, closeIdleConnections, limitConnections } from './http/connections.ts';
import { consolePlugin } from './http/console.ts';
import { ErrorEnvelope } from './http/envelope.ts';
import { frameworkErrors, registerErrorHandling } from './http/errors.ts';
import { floodGuardPlugin } from './http/flood.ts';
import { idempotencyPlugin } from './http/idempotency.ts';
import { registerJsonBody } from './http/json-body.ts';
import { trackMethods } from './http/methods.ts';
import { metricsPlugin } from './http/metrics.ts';
import { openApiOptions } from './http/openapi.ts';
import { tokenRateLimitPlugin } from './http/rate-limit.ts';
import { ORG_PREFIX, VENDOR_PREFIX, tenantScope } from './http/scope.ts';
import { systemRoutes } from './http/system.routes.ts';
import { asyncApiDocument, asyncApiServers } from './calls/asyncapi.ts';
import { websocketBase } from './http/public-url.ts';
import { traceIds } from './http/trace.ts';
import { requestLogger } from './http/request-logger.ts';
import { registerValidation } from './http/validation.ts';
import type { Runner } from './jobs/runner.ts';
import { analyticsRoutes } from './modules/analytics/analytics.routes.ts';
import { assistantRoutes } from './modules/assistants/assistants.routes.ts';
import { extensionTestRoutes } from './modules/assistants/extension-test.routes.ts';
import { versionRoutes } from './modules/assistants/versions.routes.ts';
import type { AssistantDeps } from './modules/assistants/assistants.service.ts';
import { callRecordRoutes, callStartRoutes } from './modules/calls/calls.routes.ts';
import { activeCallsGuard, type CallDeps } from './modules/calls/calls.service.ts';
import { deliveryRoutes } from './modules/events/deliveries.routes.ts';
import type { OrganizationDependent } from './modules/organizations/organizations.repository.ts';
import { organizationRoutes, organizationVendorRoutes } from './modules/organizations/organizations.routes.ts';
import { providerCredentialRoutes } from './modules/providers/providers.routes.ts';
import { sipCredentialRoutes } from './modules/sip/sip-credentials.routes.ts';
import { telephoneNumberCheck } from './modules/sip/sip-numbers.repository.ts';
import { sipNumberRoutes } from './modules/sip/sip-numbers.routes.ts';
import { strategyReferenceCheck } from './modules/strategies/strategies.repository.ts';
import { strategyRoutes } from './modules/strategies/strategies.routes.ts';
import { TASK_JOB } from './modules/tasks/tasks.jobs.ts';
import { taskRoutes } from './modules/tasks/tasks.routes.ts';
import { taskVersionPins } from './modules/tasks/tasks.repository.ts';
import { unfinishedTasksGuard } from './modules/tasks/tasks.service.ts';
import { ensureAdminTokenHash } from './modules/tokens/admin-token.ts';
import { meRoutes } from './modules/tokens/me.routes.ts';
import { tokenAuthenticator } from './modules/tokens/tokens.auth.ts';
import { tokenRoutes } from './modules/tokens/tokens.routes.ts';
import { twilioVoiceRoutes } from './modules/twilio/twilio.routes.ts';
import { vendorRoutes } from './modules/vendors/vendors.routes.ts';
import { createToolSpecAjv } from './http/validation.ts';
import { callSocketPlugin } from './modules/calls/calls.plugin.ts';
import { composeEngine, type EngineOptions } from './engine.ts';
import { telephonyMetrics, type Telephony } from './telephony/telephony.ts';
import { buildRunner } from './workers.ts';
import { organizationLlm } from './modules/analysis/analysis.llm.ts';
import { organizationAccess } from './modules/providers/provider-access.ts';
import { analysisRoutes } from './modules/analysis/analysis.routes.ts';
import { testerRoutes } from './modules/assistant-tests/tester.routes.ts';
import { recordingRoutes } from './modules/recordings/recordings.routes.ts';
import { openRecordingStorage } from './modules/recordings/storage.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The job runner of this app: agent tasks, webhook deliveries, sweeps. */
    runner: Runner;
    /** This process's SIP endpoint and RTP ports; null when PARLEY_DIALER is not `sip` (or a test gave a dialer). */
    telephony: Telephony | null;
  }
}

export interface AppOptions extends EngineOptions {
  /** Run the job runner's loop with the app (`parley serve`); tests call `app.runner.tick()` instead. */
  runJobs?: boolean;
  /** Where a generated admin token is shown, once. */
  announceAdminToken?: (token: string) => void;
  /** Sees every route as it is added (the tenant-isolation test builds its matrix from them). */
  onRoute?: (route: RouteOptions) => void;
}

/** Tables whose rows keep an organization from being deleted (409 while any exist). */
const ORGANIZATION_DEPENDENTS: readonly OrganizationDependent[] = [
  { table: 'agent_tasks', label: 'agent tasks' },
  { table: 'assistants', label: 'assistants or agents' },
  { table: 'llm_strategies', label: 'LLM generation strategies' },
  { table: 'sip_numbers', label: 'SIP numbers' },
  { table: 'sip_credentials', label: 'SIP credentials' },
  // Deleting keys is a choice the organization makes itself, as with SIP credentials.
  { table: 'provider_credentials', label: 'provider credentials' },
];

/**
 * The service as a Fastify app built from one context: platform plugins first (errors,
 * validation, OpenAPI, metrics, flood guard, auth, rate limit, idempotency), then the feature
 * modules, composed here explicitly: which checks an assistant's references get, what blocks a
 * delete, which jobs the runner runs. Vendor and organization routes sit under their scope
 * prefix, whose hook checks the tenant exists.
 */
export async function buildApp(ctx: Context, options: AppOptions = {}): Promise<FastifyInstance> {
  const { config, db } = ctx;
  await migrate(db);
  const adminTokenHash = await ensureAdminTokenHash(db, config.adminToken, options.announceAdminToken ?? (() => {}));

  const app = Fastify({
    loggerInstance: ctx.log,
    genReqId: traceIds(),
    childLoggerFactory: requestLogger,
    bodyLimit: config.bodyLimit,
    routerOptions: { maxParamLength: 200 },
    frameworkErrors,
    // The HTTP parser's own errors (malformed requests, headers over 16 KiB, timeouts) in our envelope too.
    clientErrorHandler: clientErrorHandler(ctx.clock, ctx.log),
    trustProxy: config.trustProxy,
    // Slow clients: the whole request must arrive within requestTimeout; a connection that
    // neither sends nor reads for a minute is closed by closeIdleConnections (below).
    requestTimeout: config.requestTimeoutMs,
    // Node enforces the request and header timeouts on a sweep of open connections, every 30 s
    // by default: a slow body would then live up to 30 s past its timeout. Sweep every second.
    http: { connectionsCheckingInterval: TIMEOUT_SWEEP_MS },
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.server.headersTimeout = Math.min(HEADERS_TIMEOUT_MS, config.requestTimeoutMs);
  limitConnections(app.server, { perAddress: config.maxConnectionsPerAddress, total: config.maxConnections });
  const idle = closeIdleConnections(app.server, ctx.clock);
  app.addHook('onClose', (_app, done) => {
    idle.stop();
    done();
  });
  app.decorate('ctx', ctx);
  app.decorate('isoTime', new IsoTime(ctx.clock));
  if (options.onRoute) app.addHook('onRoute', options.onRoute);

  // Hooks that never wait take `done` rather than being async: no promise and no extra turn of
  // the microtask queue per request (docs/performance.md).
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  // JSON only: a text/plain body is a 415, not a string that fails validation later.
  app.removeContentTypeParser('text/plain');
  registerJsonBody(app);
  registerValidation(app);
  registerErrorHandling(app, trackMethods(app));
  closeAfterEarlyErrors(app);
  limitUnflushedOutput(app);
  app.addSchema(ErrorEnvelope);

  await app.register(swagger, openApiOptions);
  await app.register(swaggerUi, { routePrefix: '/docs' });
  await app.register(metricsPlugin);
  await app.register(floodGuardPlugin, { ctx });
  const authCache = new AuthCache<Principal>(db);
  await app.register(authPlugin, { ctx, authenticate: tokenAuthenticator(ctx, adminTokenHash), cache: authCache });
  await app.register(tokenRateLimitPlugin, { ctx });
  await app.register(idempotencyPlugin, { ctx });

  const calls: CallDeps = { ctx, owner: ctx.processId };
  const recordings = openRecordingStorage(config);
  app.addHook('onClose', () => recordings.objects.close());
  const { calls: engine, telephony, registrations, dialer } = await composeEngine(ctx, calls, options, recordings);
  app.decorate('telephony', telephony);
  if (telephony && registrations) {
    telephonyMetrics(app.metrics, telephony);
    app.addHook('onReady', async () => registrations.start());
    app.addHook('preClose', () => registrations.close());
    app.addHook('onClose', () => telephony.close());
  }
  const runner = buildRunner(ctx, { ...(dialer ? { dialer } : {}), recordings, ...(options.llm ? { llm: options.llm } : {}) });
  app.decorate('runner', runner);
  if (options.runJobs) app.addHook('onReady', async () => runner.start());
  app.addHook('preClose', async () => runner.stop());

  const assistants: AssistantDeps = {
    db: db.kysely, box: ctx.secrets, allow: ctx.egress.allow, clock: ctx.clock, ajv: createToolSpecAjv(),
    referenceChecks: [strategyReferenceCheck, telephoneNumberCheck],
    deleteGuards: [unfinishedTasksGuard, activeCallsGuard],
    versionPins: [taskVersionPins],
  };

  await app.register(systemRoutes);
  const asyncApi = asyncApiDocument(String(openApiOptions.openapi?.info?.version ?? '1.0.0'));
  app.get('/asyncapi.json', { config: { auth: { scope: 'public' } }, schema: { hide: true } },
    async (request) => ({ ...asyncApi, servers: asyncApiServers(websocketBase(config.publicUrl, request)) }));
  await app.register(vendorRoutes);
  await app.register(meRoutes);
  await app.register(tenantScope('vendor', db, authCache, async (vendor) => {
    await vendor.register(organizationVendorRoutes);
    await vendor.register(tokenRoutes);
  }), { prefix: VENDOR_PREFIX });
  await app.register(tenantScope('organization', db, authCache, async (org) => {
    await org.register(organizationRoutes, { dependents: ORGANIZATION_DEPENDENTS });
    await org.register(strategyRoutes);
    await org.register(assistantRoutes, { kind: 'assistant', deps: assistants });
    await org.register(assistantRoutes, { kind: 'agent', deps: assistants });
    await org.register(extensionTestRoutes, { kind: 'assistant' });
    await org.register(extensionTestRoutes, { kind: 'agent' });
    await org.register(versionRoutes, { kind: 'assistant', deps: assistants });
    await org.register(versionRoutes, { kind: 'agent', deps: assistants });
    await org.register(taskRoutes, { defaultMaxAttempts: config.taskMaxAttempts, abortRunning: (id) => runner.abort(TASK_JOB, id) });
    await org.register(sipCredentialRoutes, { changed: () => void registrations?.sync() });
    await org.register(sipNumberRoutes);
    await org.register(providerCredentialRoutes);
    await org.register(callStartRoutes, { kind: 'assistant', deps: calls });
    await org.register(callStartRoutes, { kind: 'agent', deps: calls });
    await org.register(callRecordRoutes);
    await org.register(recordingRoutes, { storage: recordings });
    await org.register(analysisRoutes);
    await org.register(testerRoutes, { llmFor: organizationLlm(ctx, organizationAccess(ctx), engine.runtime.llm) });
    await org.register(deliveryRoutes);
    await org.register(analyticsRoutes);
  }), { prefix: ORG_PREFIX });
  // Under the organization's path but authenticated by Twilio's signature, not a token: outside the scope hook.
  await app.register(twilioVoiceRoutes, { prefix: ORG_PREFIX, deps: calls });
  await app.register(callSocketPlugin, { engine });
  await app.register(consolePlugin);
  return app;
}
