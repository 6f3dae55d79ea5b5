import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { Context } from '../context.ts';
import { AppError } from './errors.ts';

const WINDOW_MS = 60_000;
const MAX_ADDRESSES = 100_000;

/**
 * Floods from strangers: each client address may fail authentication (401) or ask for routes
 * that do not exist (404) only so often per minute before it is refused with 429 at once,
 * before any token check or database read. Counted per process in a bounded map (a flood hits
 * the process it connects to). Authenticated traffic is never counted here.
 */
export const floodGuardPlugin = fp(
  async (app: FastifyInstance, opts: { ctx: Context }) => {
    const budget = opts.ctx.config.failedRequestsPerAddress;
    if (budget <= 0) return;
    const { clock } = opts.ctx;
    const failures = new Map<string, { window: number; count: number }>();
    const windowOf = () => Math.floor(clock.now().getTime() / WINDOW_MS);

    app.addHook('onRequest', (request, reply, done) => {
      const entry = failures.get(request.ip);
      if (!entry || entry.window !== windowOf() || entry.count < budget) return done();
      reply.header('retry-after', String(Math.ceil((WINDOW_MS - (clock.now().getTime() % WINDOW_MS)) / 1000)));
      reply.header('connection', 'close');
      done(new AppError(429, 'Too many failed requests from this address; slow down'));
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
