import type { RequestHandler, Response } from 'express';
import { ApiError } from '../errors';
import {
  idempotencyRecordKey,
  isValidIdempotencyKey,
  requestFingerprint,
  type IdempotencyStore,
  type StoredResponse,
} from '../idempotency/store';

/** Response headers worth replaying (the rest, such as RateLimit-*, belong to the new request). */
const REPLAYED_HEADERS = ['location'];

/**
 * Idempotency-Key on POST: replays the first response of the same request within 24 h, refuses
 * the key for a different request (422) and while the first is in flight (409 + Retry-After: 1).
 * Runs after authentication (records are per account) and body parsing (the body is part of
 * "the same request"). The response is stored before it is sent, so a retry that arrives after
 * the client saw the answer always replays it; 5xx responses are not stored.
 */
export function idempotency(store: IdempotencyStore): RequestHandler {
  return async (req, res, next) => {
    if (req.method !== 'POST') return next();
    const header = req.headers['idempotency-key'];
    if (header === undefined) return next();
    if (typeof header !== 'string' || !isValidIdempotencyKey(header)) {
      throw new ApiError(400, 'invalid_idempotency_key', 'Idempotency-Key must be 1-255 printable ASCII characters without leading or trailing spaces.');
    }

    const recordKey = idempotencyRecordKey(req.account!.accountId, header);
    const fingerprint = requestFingerprint(req.method, req.path, req.body);
    const begun = await store.begin(recordKey, fingerprint);
    switch (begun.kind) {
      case 'mismatch':
        throw new ApiError(422, 'idempotency_key_reused', 'This Idempotency-Key was already used for a different request.');
      case 'in_progress':
        throw new ApiError(409, 'idempotency_in_progress', 'A request with this Idempotency-Key is still in progress.', undefined, { 'Retry-After': '1' });
      case 'replay':
        return replay(res, begun.response);
    }

    const { revision } = begun;
    let settled = false;
    const send = res.json.bind(res);
    res.json = (body: unknown) => {
      res.json = send;
      settled = true;
      const response: StoredResponse = { status: res.statusCode, body, headers: pickHeaders(res) };
      const persist = response.status >= 500 ? store.abandon(recordKey, revision) : store.complete(recordKey, revision, fingerprint, response);
      persist
        .catch((err) => req.log.error({ err }, 'could not store the idempotency record'))
        .finally(() => send(body));
      return res;
    };
    // A response sent without a JSON body, or a connection that ended first: free the key for a retry.
    res.once('close', () => {
      if (!settled) void store.abandon(recordKey, revision).catch(() => undefined);
    });
    next();
  };
}

function pickHeaders(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = res.getHeader(name);
    if (typeof value === 'string') out[name] = value;
  }
  return out;
}

function replay(res: Response, stored: StoredResponse): void {
  res.set(stored.headers);
  res.set('Idempotency-Replay', 'true');
  res.status(stored.status).json(stored.body);
}
