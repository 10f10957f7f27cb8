import type { RequestHandler } from 'express';
import { ApiError } from '../errors';

const KEY_PARAMETERS = new Set(['apikey', 'api_key', 'api-key', 'key', 'x-api-key', 'x_api_key']);

/** True when the URL's query carries a parameter that looks like an API key (any case, any value). */
export function hasApiKeyInUrl(url: string): boolean {
  const q = url.indexOf('?');
  if (q < 0) return false;
  let names: string[];
  try {
    names = [...new URLSearchParams(url.slice(q + 1)).keys()];
  } catch {
    return false;
  }
  return names.some((name) => KEY_PARAMETERS.has(name.trim().toLowerCase()));
}

/**
 * Refuses a key sent in the URL before anything else runs (authentication, routing, public
 * endpoints): URLs end up in proxy logs and browser history. The access log never has the query.
 */
export const rejectApiKeyInUrl: RequestHandler = (req, _res, next) => {
  if (hasApiKeyInUrl(req.originalUrl)) {
    next(new ApiError(400, 'api_key_in_url', 'API keys must not be sent in the URL. Send the key in the X-API-Key header, and rotate this key: URLs are logged by proxies and clients.'));
    return;
  }
  next();
};
