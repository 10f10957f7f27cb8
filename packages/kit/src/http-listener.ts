// A service's reader-facing HTTP listener (docs/architecture.md "Public pages"): tracking pixels, redirects and
// server-rendered pages that the gateway forwards to `<SVC>_HTTP_ADDR`. The service gives a plain
// request listener (an Express app); this wraps it with what the gRPC server gives every call:
// a request id (the gateway's, or a new one) bound to a logger and forwarded by outgoing gRPC calls,
// one access-log line, RED metrics, and the security headers every reader page needs.
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Histogram } from 'prom-client';
import { REQUEST_ID_KEY, runInCall, sanitizeRequestId } from './call-context';
import { gracefulHttpClose } from './lifecycle';
import type { Logger } from './logger';
import type { Metrics } from './metrics';

export interface HttpListenerOptions {
  /** host:port to bind, e.g. `127.0.0.1:7155` (port 0 picks a free one). */
  address: string;
  app: http.RequestListener;
  logger: Logger;
  metrics: Metrics;
  /** Content-Security-Policy of every answer; default `contentSecurityPolicy()` (no inline style). */
  contentSecurityPolicy?: string;
}

export interface HttpListener {
  port: number;
  /** Graceful close (see gracefulHttpClose): accepting for `delayMs`, then answers in flight finish, at most `graceMs`. */
  close(graceMs: number, delayMs?: number): Promise<void>;
}

/**
 * The policy of reader pages: nothing loads but same-origin images and the page's own inline
 * stylesheets (allowed by their SHA-256, so no other inline style or any script can run), forms
 * post to the same origin only, and no other site may frame the page.
 */
export function contentSecurityPolicy(opts: { inlineStyles?: string[] } = {}): string {
  const styles = (opts.inlineStyles ?? []).map((css) => `'sha256-${createHash('sha256').update(css, 'utf8').digest('base64')}'`);
  return [
    "default-src 'none'",
    "img-src 'self'",
    `style-src ${styles.length ? styles.join(' ') : "'none'"}`,
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

/** Metrics on the process registry, made once (a process could run more than one listener). */
function httpMetrics(metrics: Metrics) {
  const { registry } = metrics;
  const requests =
    (registry.getSingleMetric('http_requests_total') as Counter<'method' | 'route' | 'status'> | undefined) ??
    new Counter({ name: 'http_requests_total', help: 'HTTP requests answered, by method, route pattern and status', labelNames: ['method', 'route', 'status'], registers: [registry] });
  const duration =
    (registry.getSingleMetric('http_request_duration_seconds') as Histogram<'method' | 'route'> | undefined) ??
    new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency, by method and route pattern',
      labelNames: ['method', 'route'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
  return { requests, duration };
}

/** Starts the listener; resolves once it is bound. */
export async function startHttpListener(opts: HttpListenerOptions): Promise<HttpListener> {
  const { logger, app } = opts;
  const { requests, duration } = httpMetrics(opts.metrics);
  const csp = opts.contentSecurityPolicy ?? contentSecurityPolicy();
  const server = http.createServer((req, res) => {
    const started = process.hrtime.bigint();
    const requestId = sanitizeRequestId(req.headers[REQUEST_ID_KEY]);
    res.setHeader('X-Request-Id', requestId);
    res.setHeader('Content-Security-Policy', csp);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('X-Frame-Options', 'DENY');
    // Every URL here carries a reader's token: no shared cache may keep an answer.
    res.setHeader('Cache-Control', 'no-store');
    let child: Logger | undefined;
    const ctx = {
      requestId,
      rpc: `HTTP ${req.method}`,
      get log(): Logger {
        return (child ??= logger.child({ requestId }));
      },
    };
    let logged = false;
    const done = () => {
      if (logged) return;
      logged = true;
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      // The route pattern (Express sets req.route), never the path: paths carry readers' tokens.
      const route = (req as { route?: { path?: unknown } }).route?.path;
      const label = typeof route === 'string' ? route : 'unmatched';
      const status = res.writableFinished ? String(res.statusCode) : 'aborted';
      requests.inc({ method: req.method ?? '', route: label, status });
      duration.observe({ method: req.method ?? '', route: label }, seconds);
      ctx.log.info({ method: req.method, route: label, status: res.statusCode, durationMs: Math.round(seconds * 1000) }, 'request');
    };
    res.once('finish', done);
    res.once('close', done);
    runInCall(ctx, () => app(req, res));
  });
  // Installed before the first request: a graceful close must know every request in flight.
  const close = gracefulHttpClose(server);
  const [host, port] = splitAddress(opts.address);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // A slow client may not hold a connection open forever with a trickle of headers.
  server.headersTimeout = 20_000;
  server.requestTimeout = 30_000;
  return { port: (server.address() as AddressInfo).port, close };
}

function splitAddress(address: string): [string, number] {
  const i = address.lastIndexOf(':');
  return [address.slice(0, i).replace(/^\[|\]$/g, ''), Number(address.slice(i + 1))];
}
