import type { RequestHandler } from 'express';
import { isPublicWebPath } from '../routes/public-web';

/**
 * The headers every answer of the gateway carries, on the public and the admin listener alike:
 * - `X-Content-Type-Options: nosniff`: a browser never takes an answer for another type than it says
 *   (a JSON error echoing input rendered as HTML).
 * - `Cache-Control: no-store` on what the gateway answers itself (the API, the admin listener,
 *   health, errors): answers carry API keys and webhook secrets, which no shared cache or browser
 *   disk may keep. A handler may set its own (Swagger UI's assets do). Forwarded reader pages are
 *   left to their owners, which set their own Cache-Control and Content-Security-Policy.
 * - `Strict-Transport-Security` when the request arrived over https: `req.secure`, which believes
 *   X-Forwarded-Proto only from a proxy the gateway trusts (GATEWAY_TRUST_PROXY); off with max-age 0.
 */
export function securityHeaders(opts: { hstsMaxAgeSeconds: number }): RequestHandler {
  const hsts = `max-age=${opts.hstsMaxAgeSeconds}`;
  return (req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (!isPublicWebPath(req.originalUrl)) res.setHeader('Cache-Control', 'no-store');
    if (opts.hstsMaxAgeSeconds > 0 && req.secure) res.setHeader('Strict-Transport-Security', hsts);
    next();
  };
}
