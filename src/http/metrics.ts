import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { Registry, collectDefaultMetrics, type Metric } from 'prom-client';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Registry;
  }
}

type Labels = { method: string; route: string; status: string };

/** One route's answers with one method and status. */
interface Series {
  labels: Labels;
  count: number;
  sum: number;
  /** Requests per bucket (not cumulative), the last one past every bound. */
  perBucket: number[];
}

const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * The HTTP request counter and duration histogram. prom-client's Counter and Histogram validate
 * and hash the label set on every call, about 4 µs a request, 7% of the CPU of GET one assistant
 * (docs/performance.md); here a request costs one map lookup by a string key, and the records
 * are turned into prom-client's series only when /metrics is read, through two metrics of the
 * app's registry that the exposition format treats like its own (same names, types and labels).
 */
export class HttpMetrics {
  private readonly series = new Map<string, Series>();

  record(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let series = this.series.get(key);
    if (!series) {
      series = { labels: { method, route, status: String(status) }, count: 0, sum: 0, perBucket: DURATION_BUCKETS.map(() => 0).concat(0) };
      this.series.set(key, series);
    }
    series.count++;
    series.sum += seconds;
    let bucket = 0;
    while (bucket < DURATION_BUCKETS.length && seconds > (DURATION_BUCKETS[bucket] as number)) bucket++;
    (series.perBucket[bucket] as number)++;
  }

  register(registry: Registry): void {
    const all = () => [...this.series.values()];
    const reset = () => this.series.clear();
    const counter = {
      name: 'parley_http_requests_total', help: 'HTTP requests', type: 'counter', aggregator: 'sum', reset,
      get: async () => ({ name: counter.name, help: counter.help, type: counter.type, aggregator: counter.aggregator,
        values: all().map((s) => ({ labels: s.labels, value: s.count })) }),
    };
    const histogram = {
      name: 'parley_http_request_duration_seconds', help: 'HTTP request duration', type: 'histogram', aggregator: 'sum', reset,
      get: async () => ({ name: histogram.name, help: histogram.help, type: histogram.type, aggregator: histogram.aggregator,
        values: all().flatMap((s) => {
          let cumulative = 0;
          const buckets = s.perBucket.map((n, i) => {
            cumulative += n;
            return { labels: { le: i < DURATION_BUCKETS.length ? DURATION_BUCKETS[i] : '+Inf', ...s.labels }, value: cumulative, metricName: `${histogram.name}_bucket` };
          });
          return [...buckets, { labels: s.labels, value: s.sum, metricName: `${histogram.name}_sum` }, { labels: s.labels, value: s.count, metricName: `${histogram.name}_count` }];
        }) }),
    };
    registry.registerMetric(counter as unknown as Metric);
    registry.registerMetric(histogram as unknown as Metric);
  }
}

/** Prometheus metrics on a registry of this app's own, so several apps in one process stay apart. */
export const metricsPlugin = fp(
  async (app: FastifyInstance) => {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry, prefix: 'parley_' });
    const http = new HttpMetrics();
    http.register(registry);
    app.decorate('metrics', registry);
    app.addHook('onResponse', (request, reply, done) => {
      // The route pattern, never the raw URL, keeps label cardinality bounded.
      http.record(request.method, request.is404 ? 'unmatched' : (request.routeOptions.url ?? 'unmatched'), reply.statusCode, reply.elapsedTime / 1000);
      done();
    });
  },
  { name: 'parley-metrics' },
);
