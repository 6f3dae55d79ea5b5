import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Context } from '../context.ts';
import { AppError, errorEnvelope } from './errors.ts';

const WINDOW_MS = 60_000;
const MAX_ADDRESSES = 100_000;
const REFUSAL = 'Too many failed requests from this address; slow down';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A health probe (/healthz, /readyz): answered whatever the flood guard thinks of the address. */
    probe?: boolean;
  }
  interface FastifyRequest {
    /** From an address past its failure budget: an answer without valid credentials becomes the guard's 429. */
    fromFloodingAddress: boolean;
  }
}

/**
 * Floods from strangers: each client address may fail authentication (401) or ask for routes
 * that do not exist (404) only so often per minute. Past that, the address gets 429 for what
 * the guard protects against, requests without valid credentials, and nothing else: everyone
 * behind one NAT or proxy shares the address, and a probe refused would have an orchestrator
 * restart a healthy service. So, until the minute ends:
 * - a route that does not exist is refused at once, before any token check or database read;
 * - a route's credentials (API token, call token) are checked as for anyone, and a failure is
 *   answered 429 instead of 401 (the check is the one read by key any request costs, no write);
 * - health probes, and routes that take no credentials (the console, the API reference), are
 *   served as usual: they never count as failures either.
 * Counted per process in a bounded map (a flood hits the process it connects to). Authenticated
 * traffic is never counted here.
 */
export const floodGuardPlugin = fp(
  async (app: FastifyInstance, opts: { ctx: Context }) => {
    const budget = opts.ctx.config.failedRequestsPerAddress;
    app.decorateRequest('fromFloodingAddress', false);
    if (budget <= 0) return;
    const { clock } = opts.ctx;
    const failures = new Map<string, { window: number; count: number }>();
    const windowOf = () => Math.floor(clock.now().getTime() / WINDOW_MS);
    const refuse = (reply: FastifyReply) => {
      reply.header('retry-after', String(Math.ceil((WINDOW_MS - (clock.now().getTime() % WINDOW_MS)) / 1000)));
      reply.header('connection', 'close');
    };

    app.addHook('onRequest', (request, reply, done) => {
      const entry = failures.get(request.ip);
      if (!entry || entry.window !== windowOf() || entry.count < budget || request.routeOptions.config.probe) return done();
      if (!request.is404) {
        request.fromFloodingAddress = true;
        return done();
      }
      refuse(reply);
      done(new AppError(429, REFUSAL));
    });

    // Where the credentials failed (the auth hook, a call socket's token check), the answer is
    // already in the envelope; it is swapped for the guard's, so the stranger learns nothing more.
    app.addHook('onSend', (request, reply, payload, done) => {
      if (!request.fromFloodingAddress || request.principal !== null || (reply.statusCode !== 401 && reply.statusCode !== 404)) return done(null, payload);
      refuse(reply);
      reply.code(429);
      done(null, JSON.stringify(errorEnvelope(new AppError(429, REFUSAL), request.id, clock.now())));
    });

    const countFailure = (ip: string) => {
      const window = windowOf();
      let entry = failures.get(ip);
      if (!entry || entry.window !== window) {
        entry = { window, count: 0 };
        failures.delete(ip);
        failures.set(ip, entry);
        if (failures.size > MAX_ADDRESSES) failures.delete(failures.keys().next().value as string);
      }
      entry.count++;
    };
    app.addHook('onResponse', (request, reply, done) => {
      if (request.principal === null && (reply.statusCode === 401 || reply.statusCode === 404)) countFailure(request.ip);
      done();
    });
  },
  { name: 'parley-flood-guard' },
);
