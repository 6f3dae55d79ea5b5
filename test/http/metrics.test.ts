import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Counter, Histogram, Registry } from 'prom-client';
import { HttpMetrics } from '../../src/http/metrics.ts';

describe('HTTP metrics', () => {
  it('expose exactly what prom-client\'s own Counter and Histogram would, and reset with the registry', async () => {
    const reference = new Registry();
    const labelNames = ['method', 'route', 'status'] as const;
    const requests = new Counter({ name: 'parley_http_requests_total', help: 'HTTP requests', labelNames, registers: [reference] });
    const duration = new Histogram({
      name: 'parley_http_request_duration_seconds', help: 'HTTP request duration', labelNames,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5], registers: [reference],
    });
    const ours = new Registry();
    const http = new HttpMetrics();
    http.register(ours);
    // On a bound, between bounds, past the last one; three series.
    const seen: [string, string, number, number][] = [
      ['GET', '/a', 200, 0.0004], ['GET', '/a', 200, 0.001], ['GET', '/a', 200, 0.003], ['POST', '/b/:id', 404, 3],
      ['GET', '/a', 500, 0.2], ['GET', '/a', 200, 0.0025], ['GET', '/a', 200, 2.5],
    ];
    for (const [method, route, status, seconds] of seen) {
      const labels = { method, route, status: String(status) };
      requests.inc(labels);
      duration.observe(labels, seconds);
      http.record(method, route, status, seconds);
    }
    const text = await ours.metrics();
    assert.match(text, /parley_http_request_duration_seconds_bucket\{le="\+Inf",method="POST",route="\/b\/:id",status="404"\} 1/);
    assert.equal(text, await reference.metrics());
    reference.resetMetrics();
    ours.resetMetrics();
    assert.equal(await ours.metrics(), await reference.metrics());
  });
});
