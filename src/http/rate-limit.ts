import rateLimit from '@fastify/rate-limit';
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { Context } from '../context.ts';
import { AppError } from './errors.ts';
import { FleetQuotaStore } from './rate-limit-store.ts';

export const RATE_LIMIT_WINDOW_MS = 60_000;
const WINDOW_MS = RATE_LIMIT_WINDOW_MS;

/**
 * Per-token rate limit shared by every process (@fastify/rate-limit with a database-backed
 * store): it runs after authentication, keyed by the token (the platform admin counts as one).
 * Answers 429 with Retry-After; every authenticated response carries RateLimit-Limit,
 * -Remaining, -Reset (IETF draft names) and RateLimit-Policy.
 */
export const tokenRateLimitPlugin = fp(
  async (app: FastifyInstance, opts: { ctx: Context }) => {
    const limit = opts.ctx.config.rateLimitPerMinute;
    if (limit <= 0) return;
    const store = new FleetQuotaStore(opts.ctx.db, opts.ctx.clock, limit, WINDOW_MS);
    const policy = `${limit};w=${WINDOW_MS / 1000}`;
    await app.register(rateLimit, {
      global: true,
      hook: 'onRequest',
      max: limit,
      timeWindow: WINDOW_MS,
      enableDraftSpec: true,
      // A class the plugin instantiates; ours is built already, so hand it back.
      store: function Store() { return store; } as unknown as new () => FleetQuotaStore,
      // Public routes and unauthenticated requests are not counted here (see http/flood.ts).
      allowList: (request) => request.principal === null,
      keyGenerator: (request) => (request.principal?.kind === 'token' ? request.principal.tokenId : 'admin'),
      errorResponseBuilder: (_request, context) =>
        new AppError(429, `Rate limit of ${context.max} requests per ${WINDOW_MS / 1000} s reached for this token`),
    });
    app.addHook('onSend', (request, reply, payload, done) => {
      if (request.principal) reply.header('ratelimit-policy', policy);
      done(null, payload);
    });
  },
  { name: 'parley-rate-limit', dependencies: ['parley-auth'] },
);
