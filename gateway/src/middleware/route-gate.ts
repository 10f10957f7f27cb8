import type { RequestHandler, Router } from 'express';

/** path-to-regexp syntax: a first segment holding any of these is not plain text. */
const PATTERN_SYNTAX = /[:*?(){}\\+!]/;

interface StackLayer {
  route?: unknown;
  rawPath?: unknown;
}

/** The plain-text first segments (lowercased) every layer of a router is bound to, or undefined when some layer may match any path. */
function firstSegments(router: Router): Set<string> | undefined {
  const segments = new Set<string>();
  for (const layer of router.stack as StackLayer[]) {
    const paths = Array.isArray(layer.rawPath) ? layer.rawPath : [layer.rawPath];
    for (const path of paths) {
      if (typeof path !== 'string' || !path.startsWith('/')) return undefined;
      const end = path.indexOf('/', 1);
      const segment = path.slice(1, end < 0 ? undefined : end);
      if (segment === '' || PATTERN_SYNTAX.test(segment)) return undefined;
      segments.add(segment.toLowerCase());
    }
  }
  return segments;
}

/**
 * A router behind a check of the request path's first segment: a router none of whose routes can
 * match is skipped at once. Express would try each of its layers and then leave it through a
 * setImmediate (one event-loop turn per router a request passes: ~10 for the last routes).
 * Exact: Express matches paths case-insensitively in ASCII only, on the raw (still encoded) path,
 * a literal first segment only as a whole segment; a router with any layer not bound to a literal
 * first segment (a `use()` without path, a parameter first) is never skipped. The router's stack
 * stays visible for route-table.ts.
 */
export function gated(router: Router): RequestHandler {
  const segments = firstSegments(router);
  if (!segments) return router;
  const gate: RequestHandler & { stack?: unknown } = (req, res, next) => {
    const path = req.path;
    const end = path.indexOf('/', 1);
    if (!segments.has(path.slice(1, end < 0 ? undefined : end).toLowerCase())) return next();
    router(req, res, next);
  };
  gate.stack = router.stack;
  return gate;
}
