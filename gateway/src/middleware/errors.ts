import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ApiError, toApiError } from '../errors';
import { matchRoute, type RouteEntry } from '../route-table';

/** After every route: 405 (with Allow) when the path exists with other methods, else 404. */
export function routeNotFound(routes: () => RouteEntry[]): RequestHandler {
  return (req, _res, next) => {
    const route = matchRoute(routes(), req.path);
    if (route) {
      const allow = route.methods.includes('GET') ? [...route.methods, 'HEAD'] : route.methods;
      next(new ApiError(405, 'method_not_allowed', `${req.method} is not allowed on this path.`, undefined, { Allow: allow.join(', ') }));
      return;
    }
    next(new ApiError(404, 'route_not_found', 'No operation exists at this path.'));
  };
}

/**
 * The last middleware: every error becomes ErrorMessageDto. 5xx responses say nothing about the
 * cause; the cause goes to the log, next to the request id the client sees.
 */
export const errorHandler: ErrorRequestHandler = (err, req, res, _next) => {
  const error = toApiError(err);
  if (error.status >= 500) req.log?.error({ err, errorId: error.errorId }, 'request failed');
  res.locals.errorId = error.errorId; // for the access-log line (request-context.ts)
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.set(error.headers);
  res.status(error.status).json(error.toDto());
};
