import { Router } from 'express';
import swaggerUi from 'swagger-ui-express';
import { ApiError } from '../errors';
import { openApiDocument } from '../openapi/document';

export interface Readiness {
  /** NATS connected and answering. */
  nats(): Promise<boolean>;
  /** The subscriber service reports SERVING. */
  subscriber(): Promise<boolean>;
  /** True once shutting down (SIGTERM): the replica is to be taken out of rotation. Absent: never. */
  stopping?(): boolean;
}

/** Public endpoints: no key, no rate limit, and no details beyond the status. */
export function publicRoutes(readiness: Readiness): Router {
  const router = Router();

  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  router.get('/readyz', async (_req, res) => {
    if (readiness.stopping?.()) throw new ApiError(503, 'service_unavailable', 'Shutting down.');
    const [nats, subscriber] = await Promise.all([readiness.nats(), readiness.subscriber()]);
    if (!nats || !subscriber) throw new ApiError(503, 'service_unavailable', 'Not ready.');
    res.json({ status: 'ok' });
  });

  router.get('/openapi.json', (_req, res) => {
    res.json(openApiDocument);
  });

  // swagger-ui's assets are served under /docs/; the page itself is the one documented route.
  // The page loads the document by URL: inlined into its init script (swagger-ui-express's
  // default), the document's text goes through String.replace, whose `$` patterns corrupt it
  // and leave a blank page.
  const docsOptions = { customSiteTitle: 'Mailer customer API', swaggerOptions: { url: '/openapi.json' } };
  // swagger-ui-dist also ships a stock index.html that shows the Petstore example: send it to ours.
  // (Middleware, not a route: the documented routes are exactly the OpenAPI document's.)
  router.use('/docs', (req, res, next) => (req.path === '/index.html' ? res.redirect(301, '/docs/') : next()));
  router.use('/docs', swaggerUi.serveFiles(undefined, docsOptions));
  router.get('/docs', swaggerUi.setup(undefined, docsOptions));

  return router;
}
