import './types';
import express, { type Express } from 'express';
import type { Logger } from '@mailer/kit';
import type { AccountStore } from './accounts/accounts';
import type { ServiceClients } from './clients';
import type { AcceptedEventKeys, EventSink } from './events/publisher';
import type { IdempotencyStore } from './idempotency/store';
import type { GatewayMetrics } from './metrics';
import { rejectApiKeyInUrl } from './middleware/api-key-in-url';
import { authenticate } from './middleware/authenticate';
import { jsonBody } from './middleware/body';
import { errorHandler, routeNotFound } from './middleware/errors';
import { idempotency } from './middleware/idempotency';
import { gated } from './middleware/route-gate';
import { accountRateLimit } from './middleware/rate-limit';
import { bindRequestLog, requestContext } from './middleware/request-context';
import { securityHeaders } from './middleware/security-headers';
import type { RateLimiter } from './ratelimit/limiter';
import { routesOf, type RouteEntry } from './route-table';
import { accountRoutes } from './routes/account';
import { catalogRoutes } from './routes/catalog';
import { emailMessageRoutes } from './routes/email-messages';
import { broadcastRoutes } from './routes/broadcasts';
import { automationRoutes } from './routes/automations';
import { eventLogRoutes } from './routes/event-log';
import { eventRoutes } from './routes/events';
import { formRoutes } from './routes/forms';
import { webhookRoutes } from './routes/webhooks';
import { rssRoutes } from './routes/rss';
import { publicRoutes, type Readiness } from './routes/public';
import { publicWeb, type PublicUpstream } from './routes/public-web';
import { reportRoutes } from './routes/reports';
import { segmentRoutes } from './routes/segments';
import { emailCatalogRoutes } from './routes/email-catalog';
import { subscriberRoutes } from './routes/subscribers';
import { suppressionRoutes } from './routes/suppressions';

export interface AppDeps {
  logger: Logger;
  metrics: GatewayMetrics;
  accounts: AccountStore;
  limiter: RateLimiter;
  idempotency: IdempotencyStore;
  events: { sink: EventSink; acceptedKeys: AcceptedEventKeys };
  clients: ServiceClients;
  readiness: Readiness;
  /** Reverse-proxy hops whose X-Forwarded-For (client address) and X-Forwarded-Proto (https) are trusted. */
  trustProxy: number;
  /** Strict-Transport-Security max-age on answers to https requests (0: none). */
  hstsMaxAgeSeconds: number;
  unauthenticatedPerMinute: number;
  /** Reader-facing pages forwarded to their owners' HTTP listeners (routes/public-web.ts). */
  publicWeb: { upstreams: Record<PublicUpstream, string>; perMinute: number };
}

/**
 * The public HTTP app, in the order a request meets it:
 *   request id + access log + metrics -> security headers -> key-in-URL refusal -> public web surface (forwarded as
 *   HTTP, per-address budget) -> public endpoints ->
 *   authentication -> account rate limit -> JSON body -> idempotency -> routes -> 404/405 -> errors
 * Authentication precedes routing, so an unauthenticated client learns nothing about paths, and
 * nothing is parsed for it.
 */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', deps.trustProxy);

  let routes: RouteEntry[] | undefined;
  const routeTable = () => (routes ??= routesOf(app));

  bindRequestLog(app.request, deps.logger);
  app.use(requestContext({ logger: deps.logger, metrics: deps.metrics, routes: routeTable }));
  app.use(securityHeaders({ hstsMaxAgeSeconds: deps.hstsMaxAgeSeconds }));
  app.use(rejectApiKeyInUrl);
  // Before authentication and before any body parser: the owner reads the body itself.
  app.use(publicWeb({ logger: deps.logger, metrics: deps.metrics, limiter: deps.limiter, ...deps.publicWeb }));
  app.use(gated(publicRoutes(deps.readiness)));

  app.use(authenticate({ accounts: deps.accounts, limiter: deps.limiter, metrics: deps.metrics, unauthenticatedPerMinute: deps.unauthenticatedPerMinute }));
  app.use(accountRateLimit({ limiter: deps.limiter, metrics: deps.metrics }));
  app.use(jsonBody());
  app.use(idempotency(deps.idempotency));

  // Express tries routes one by one in this order: /events, the high-volume endpoint, goes first
  // (behind ~50 other routes it spent ~30 µs per event on failed matches). Each router is skipped
  // at once when the path's first segment rules all of its routes out (middleware/route-gate.ts).
  app.use(gated(eventRoutes(deps.events)));
  app.use(gated(subscriberRoutes(deps.clients)));
  app.use(gated(catalogRoutes(deps.clients)));
  app.use(gated(segmentRoutes(deps.clients)));
  app.use(gated(suppressionRoutes(deps.clients)));
  app.use(gated(reportRoutes(deps.clients)));
  app.use(gated(emailCatalogRoutes(deps.clients)));
  app.use(gated(emailMessageRoutes(deps.clients)));
  app.use(gated(formRoutes(deps.clients)));
  app.use(gated(eventLogRoutes(deps.clients)));
  app.use(gated(automationRoutes(deps.clients)));
  app.use(gated(webhookRoutes(deps.clients)));
  app.use(gated(rssRoutes(deps.clients)));
  app.use(gated(broadcastRoutes(deps.clients)));
  app.use(gated(accountRoutes()));

  app.use(routeNotFound(routeTable));
  app.use(errorHandler);
  return app;
}
