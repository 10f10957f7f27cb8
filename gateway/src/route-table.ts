import type { Express } from 'express';

/** One route registered in Express: its pattern (`/subscribers/:subscriberId`) and methods. */
export interface RouteEntry {
  path: string;
  methods: string[];
  regex: RegExp;
}

interface Layer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

/**
 * Every route registered in an app, read back from Express itself (routers mounted without a
 * prefix). It labels metrics with the route pattern even for requests answered before routing
 * (401, 429), tells 405 from 404, and lets a test compare the routes with the OpenAPI document.
 */
export function routesOf(app: Express): RouteEntry[] {
  const byPath = new Map<string, Set<string>>();
  const walk = (stack: Layer[]) => {
    for (const layer of stack) {
      if (layer.route) {
        const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
        for (const p of paths) {
          const methods = byPath.get(p) ?? new Set<string>();
          for (const [m, on] of Object.entries(layer.route.methods)) if (on && m !== '_all') methods.add(m.toUpperCase());
          byPath.set(p, methods);
        }
      } else if (layer.handle?.stack) {
        walk(layer.handle.stack);
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack);
  return [...byPath].map(([path, methods]) => ({ path, methods: [...methods].sort(), regex: patternRegex(path) }));
}

/** Express's matching (case-insensitive, optional trailing slash) for `:param` patterns. */
function patternRegex(path: string): RegExp {
  const source = path
    .split('/')
    .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}/?$`, 'i');
}

export function matchRoute(routes: RouteEntry[], path: string): RouteEntry | undefined {
  return routes.find((r) => r.regex.test(path));
}
