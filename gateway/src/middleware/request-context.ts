import type { RequestHandler } from 'express';
import { sanitizeRequestId, type Logger } from '@mailer/kit';
import { redactApiKeys } from '../accounts/api-key';
import type { GatewayMetrics } from '../metrics';
import { matchRoute, type RouteEntry } from '../route-table';

// The same rule as the services apply to the id they receive as gRPC metadata (one definition, in the kit).
export { sanitizeRequestId };

/**
 * First middleware of every request: request id, a request-bound logger, one access-log line and
 * the RED metrics when the response finishes. The log carries the path only, never the query
 * string (it may hold a key sent by mistake), and never headers; a key sent as a path segment
 * (`/subscribers/mk_...`) is redacted from it.
 */
export function requestContext(deps: { logger: Logger; metrics: GatewayMetrics; routes: () => RouteEntry[] }): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    req.requestId = sanitizeRequestId(req.headers['x-request-id']);
    req.log = deps.logger.child({ requestId: req.requestId });
    res.setHeader('X-Request-Id', req.requestId);

    let logged = false;
    const done = () => {
      if (logged) return;
      logged = true;
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      // A forwarded public page names its prefix (res.locals.route): its path carries a reader's token.
      const route = (res.locals.route as string | undefined) ?? req.route?.path ?? matchRoute(deps.routes(), req.path)?.path ?? 'unmatched';
      const path = res.locals.route ? route : redactApiKeys(req.path);
      // A response that never finished (client went away) has no meaningful status code.
      const status = res.writableFinished ? String(res.statusCode) : 'aborted';
      deps.metrics.httpRequests.inc({ method: req.method, route, status });
      deps.metrics.httpDuration.observe({ method: req.method, route }, seconds);
      req.log.info(
        // accountId is already bound to req.log by authentication.
        { method: req.method, path, route, status: res.statusCode, errorId: res.locals.errorId, durationMs: Math.round(seconds * 1000) },
        'request',
      );
    };
    res.once('finish', done);
    res.once('close', done);
    next();
  };
}
