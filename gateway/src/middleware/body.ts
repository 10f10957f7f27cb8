import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import express, { type RequestHandler } from 'express';
import { ApiError } from '../errors';
import { noteReservedMember, rejectUnrepresentable, scanJson, type Suspicions } from './json-scan';

export const DEFAULT_BODY_LIMIT = 1024 * 1024;
/** Bulk sync carries up to 1,000 subscribers, with their field values; a batch of mail up to 500 messages with their values. */
export const BODY_LIMITS: Record<string, number> = { '/subscribers/sync': 10 * 1024 * 1024, '/email-messages/batch': 10 * 1024 * 1024 };

const JSON_TYPES = ['application/json', 'application/*+json'];

function hasBody(headers: { 'transfer-encoding'?: string; 'content-length'?: string }): boolean {
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
}

/** express.json's own test (type-is hasBody): false means it would read nothing (`Content-Length: 0` is a body to it, `{}`). */
function mayHaveBody(headers: { 'transfer-encoding'?: string; 'content-length'?: string }): boolean {
  return headers['transfer-encoding'] !== undefined || !Number.isNaN(Number(headers['content-length']));
}

/**
 * JSON bodies only. A request with a body of another type is refused (415) instead of being
 * silently ignored; malformed JSON and bodies over the limit become 400 / 413 in the error
 * handler. `strict: false` lets a JSON scalar through to schema validation, which names the problem.
 * Before parsing, the raw (decompressed) bytes must be UTF-8 (else `400 malformed_json`; other
 * charsets `415`) and are scanned once (json-scan.ts): nesting deeper than
 * MAX_JSON_DEPTH is `400 json_too_deep`; a body that may hold a number beyond the double range,
 * an unpaired surrogate escape or a `__proto__` member is walked after parsing and refused if it does
 * (a `__proto__` member after schema validation: refuseReservedMember).
 */
export function jsonBody(): RequestHandler {
  const suspicious = new WeakMap<IncomingMessage, Suspicions>();
  const verify = (req: IncomingMessage, _res: unknown, buf: Buffer, charset: string) => {
    // body-parser decodes with replacement characters: invalid bytes would be stored as U+FFFD.
    // isUtf8 is native (simdutf), a few GB/s, so the hot path (/events) does not notice it.
    if (charset !== 'utf-8') throw new ApiError(415, 'unsupported_media_type', 'The charset of the body is not supported; send UTF-8 JSON.');
    if (!isUtf8(buf)) throw new ApiError(400, 'malformed_json', 'The request body is not valid UTF-8.');
    const scan = scanJson(buf);
    if (scan.mayOverflowNumbers || scan.maySurrogates || scan.mayProtoKey) suspicious.set(req, scan);
  };
  const parsers = new Map<number, RequestHandler>();
  const parser = (limit: number) => {
    let p = parsers.get(limit);
    if (!p) {
      p = express.json({ limit, strict: false, type: JSON_TYPES, verify });
      parsers.set(limit, p);
    }
    return p;
  };
  return (req, res, next) => {
    // Most requests (every GET) have no body: nothing to read, check or scan (`req.body` stays
    // undefined, as express.json leaves it on such a request).
    if (!mayHaveBody(req.headers)) return next();
    if (hasBody(req.headers) && !req.is(JSON_TYPES)) {
      next(new ApiError(415, 'unsupported_media_type', 'Request bodies must be JSON (Content-Type: application/json).'));
      return;
    }
    const limit = BODY_LIMITS[req.path.replace(/\/$/, '').toLowerCase()] ?? DEFAULT_BODY_LIMIT;
    parser(limit)(req, res, (err?: unknown) => {
      const look = suspicious.get(req);
      if (err || !look) return next(err);
      try {
        const reserved = rejectUnrepresentable(req.body, look);
        if (reserved) noteReservedMember(req.body, reserved);
      } catch (e) {
        return next(e);
      }
      next();
    });
  };
}
