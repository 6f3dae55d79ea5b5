import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Registry;
  }
}

/** Prometheus metrics on a registry of this app's own, so several apps in one process stay apart. */
export const metricsPlugin = fp(
  async (app: FastifyInstance) => {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry, prefix: 'parley_' });
    const labelNames = ['method', 'route', 'status'] as const;
    const requests = new Counter({ name: 'parley_http_requests_total', help: 'HTTP requests', labelNames, registers: [registry] });
    const duration = new Histogram({
      name: 'parley_http_request_duration_seconds',
      help: 'HTTP request duration',
      labelNames,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    });
    app.decorate('metrics', registry);
    app.addHook('onResponse', (request, reply, done) => {
      // The route pattern, never the raw URL, keeps label cardinality bounded.
      const labels = { method: request.method, route: request.is404 ? 'unmatched' : (request.routeOptions.url ?? 'unmatched'), status: String(reply.statusCode) };
      requests.inc(labels);
      duration.observe(labels, reply.elapsedTime / 1000);
      done();
    });
  },
  { name: 'parley-metrics' },
);
