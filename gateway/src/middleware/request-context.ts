import type { RequestHandler } from 'express';
import { sanitizeRequestId, type Logger } from '@mailer/kit';
import { redactApiKeys } from '../accounts/api-key';
import type { GatewayMetrics } from '../metrics';
import { matchRoute, type RouteEntry } from '../route-table';

// The same rule as the services apply to the id they receive as gRPC metadata (one definition, in the kit).
export { sanitizeRequestId };

const BOUND = Symbol('requestLog');
interface Bound {
  requestId: string;
  account?: { accountId: string };
  [BOUND]?: { log: Logger; account: unknown } | { log: Logger; fixed: true };
}

/**
 * `req.log` of an app's requests, made on first use: a request-bound pino child logger (requestId,
 * and accountId once authenticated) costs an object and serialized bindings, and most requests
 * never log anything but their access line (which binds the same fields itself). A logger made
 * before authentication is remade once the account is known, so every line after it names the
 * account. Assigning `req.log` replaces it for the rest of the request.
 */
export function bindRequestLog(request: object, logger: Logger): void {
  Object.defineProperty(request, 'log', {
    configurable: true,
    get(this: Bound): Logger {
      const bound = this[BOUND];
      const account = this.account;
      if (bound && ('fixed' in bound || bound.account === account)) return bound.log;
      const log = logger.child(account ? { requestId: this.requestId, accountId: account.accountId } : { requestId: this.requestId });
      this[BOUND] = { log, account };
      return log;
    },
    set(this: Bound, log: Logger) {
      this[BOUND] = { log, fixed: true };
    },
  });
}

/**
 * First middleware of every request: request id, one access-log line and the RED metrics when the
 * response is done (`req.log` is bound lazily, see bindRequestLog). The log carries the path only,
 * never the query string (it may hold a key sent by mistake), and never headers; a key sent as a
 * path segment (`/subscribers/mk_...`) is redacted from it.
 */
export function requestContext(deps: { logger: Logger; metrics: GatewayMetrics; routes: () => RouteEntry[] }): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    req.requestId = sanitizeRequestId(req.headers['x-request-id']);
    res.setHeader('X-Request-Id', req.requestId);

    // 'close' follows 'finish' on every response, and also comes alone when the client went away.
    res.once('close', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      // A forwarded public page names its prefix (res.locals.route): its path carries a reader's token.
      const route = (res.locals.route as string | undefined) ?? req.route?.path ?? matchRoute(deps.routes(), req.path)?.path ?? 'unmatched';
      const path = res.locals.route ? route : redactApiKeys(req.path);
      // A response that never finished (client went away) has no meaningful status code.
      const status = res.writableFinished ? String(res.statusCode) : 'aborted';
      deps.metrics.httpRequests.inc({ method: req.method, route, status });
      deps.metrics.httpDuration.observe({ method: req.method, route }, seconds);
      deps.logger.info(
        {
          requestId: req.requestId,
          accountId: req.account?.accountId,
          method: req.method,
          path,
          route,
          status: res.statusCode,
          errorId: res.locals.errorId,
          durationMs: Math.round(seconds * 1000),
        },
        'request',
      );
    });
    next();
  };
}
