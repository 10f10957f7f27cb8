import express, { type RequestHandler } from 'express';
import { ApiError } from '../errors';

export const DEFAULT_BODY_LIMIT = 1024 * 1024;
/** Bulk sync carries up to 1,000 subscribers, with their field values. */
export const BODY_LIMITS: Record<string, number> = { '/subscribers/sync': 10 * 1024 * 1024 };

const JSON_TYPES = ['application/json', 'application/*+json'];

function hasBody(headers: { 'transfer-encoding'?: string; 'content-length'?: string }): boolean {
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
}

/**
 * JSON bodies only. A request with a body of another type is refused (415) instead of being
 * silently ignored; malformed JSON and bodies over the limit become 400 / 413 in the error
 * handler. `strict: false` lets a JSON scalar through to schema validation, which names the problem.
 */
export function jsonBody(): RequestHandler {
  const parsers = new Map<number, RequestHandler>();
  const parser = (limit: number) => {
    let p = parsers.get(limit);
    if (!p) {
      p = express.json({ limit, strict: false, type: JSON_TYPES });
      parsers.set(limit, p);
    }
    return p;
  };
  return (req, res, next) => {
    if (hasBody(req.headers) && !req.is(JSON_TYPES)) {
      next(new ApiError(415, 'unsupported_media_type', 'Request bodies must be JSON (Content-Type: application/json).'));
      return;
    }
    const limit = BODY_LIMITS[req.path.replace(/\/$/, '').toLowerCase()] ?? DEFAULT_BODY_LIMIT;
    parser(limit)(req, res, next);
  };
}
