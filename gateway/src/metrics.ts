import { Counter, createMetrics, Histogram, outcomeCounter } from '@mailer/kit';

/** The gateway's metrics, on its own registry (one per app instance, so tests can build many). */
export function createGatewayMetrics() {
  const base = createMetrics('gateway');
  const { registry } = base;
  return {
    registry,
    httpRequests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency, by method and route pattern',
      labelNames: ['method', 'route'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    // Every budget at 0 from the start: the rejection-rate alert has a series before the first 429.
    rateLimitRejections: outcomeCounter(registry, {
      name: 'rate_limit_rejections_total',
      help: 'Requests refused with 429, by budget (default, events, unauthenticated, public)',
      label: 'bucket',
      values: ['default', 'events', 'unauthenticated', 'public'],
    }),
  };
}
export type GatewayMetrics = ReturnType<typeof createGatewayMetrics>;
