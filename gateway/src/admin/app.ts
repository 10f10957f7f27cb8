import { createHash, timingSafeEqual } from 'node:crypto';
import express, { type Express, type RequestHandler } from 'express';
import type { Logger } from '@mailer/kit';
import { AccountNotFound, ApiKeyNotFound, type AccountStore } from '../accounts/accounts';
import { redactApiKeys } from '../accounts/api-key';
import { ApiError } from '../errors';
import { errorHandler } from '../middleware/errors';
import { sanitizeRequestId } from '../middleware/request-context';
import { securityHeaders } from '../middleware/security-headers';
import { DEFAULT_RATE_LIMITS, resolveLimits, type RateLimits } from '../ratelimit/policies';

export interface AdminDeps {
  accounts: AccountStore;
  adminToken: string;
  logger: Logger;
  /** Re-seals the webhook service's signing secrets under its current key (service-reseal.ts). */
  resealWebhookSecrets(): Promise<{ subscriptions: number; resealed: number; failed: string[] }>;
  /** Re-seals the messaging service's DKIM private keys under its current key (service-reseal.ts). */
  resealDkimKeys(): Promise<{ domains: number; resealed: number; failed: string[] }>;
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time (hashes first, so lengths never leak). */
export function requireAdminToken(adminToken: string): RequestHandler {
  const expected = sha256(adminToken);
  return (req, _res, next) => {
    const match = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    if (!match || !timingSafeEqual(sha256(match[1]), expected)) {
      next(new ApiError(401, 'admin_token_invalid', 'A valid admin token is required (Authorization: Bearer <ADMIN_TOKEN>).'));
      return;
    }
    next();
  };
}

const LIMIT_FIELDS = ['perMinute', 'perHour', 'eventsPerSecond', 'eventsBurst'] as const;

function parseLimits(body: unknown): Partial<RateLimits> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError(400, 'validation_failed', 'Expected a JSON object with perMinute, perHour, eventsPerSecond and/or eventsBurst.');
  }
  const out: Partial<RateLimits> = {};
  for (const [name, value] of Object.entries(body)) {
    if (!(LIMIT_FIELDS as readonly string[]).includes(name)) {
      throw new ApiError(400, 'unknown_property', `Unknown property body.${name}.`, [{ path: `body.${name}`, problem: 'is not a known property' }]);
    }
    if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > 1_000_000) {
      throw new ApiError(400, 'validation_failed', `body.${name} must be an integer from 1 to 1000000.`, [{ path: `body.${name}`, problem: 'must be an integer from 1 to 1000000' }]);
    }
    out[name as keyof RateLimits] = value as number;
  }
  return out;
}

/**
 * The admin listener: account and key management for the operator (and the operator CLI). It runs
 * on its own port, bound to ADMIN_HOST (loopback by default), and is never exposed publicly.
 *
 *   POST   /admin/accounts                          {name} -> 201 {accountId, apiKey}
 *   GET    /admin/accounts/:accountId               -> {accountId, name, createdAt, hasApiKey, limits}
 *   GET    /admin/accounts/:accountId/api-key       show   -> {accountId, apiKey}
 *   POST   /admin/accounts/:accountId/api-key       create -> 201 new / 200 existing {accountId, apiKey}
 *   POST   /admin/accounts/:accountId/api-key/rotate       -> {accountId, apiKey}
 *   DELETE /admin/accounts/:accountId/api-key       delete -> {accountId, deleted: true}
 *   GET    /admin/accounts/:accountId/rate-limits   -> effective limits
 *   PATCH  /admin/accounts/:accountId/rate-limits   {perMinute?, perHour?, eventsPerSecond?, eventsBurst?} -> effective limits
 *   POST   /admin/reseal-secrets                    -> {apiKeys: {accounts, resealed, failed}, webhookSecrets: {subscriptions, resealed, failed}, dkimKeys: {domains, resealed, failed}}
 */
export function createAdminApp(deps: AdminDeps): Express {
  const { accounts } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.use((req, res, next) => {
    req.requestId = sanitizeRequestId(req.headers['x-request-id']);
    req.log = deps.logger.child({ requestId: req.requestId, listener: 'admin' });
    res.setHeader('X-Request-Id', req.requestId);
    res.once('finish', () => req.log.info({ method: req.method, path: redactApiKeys(req.path), status: res.statusCode }, 'admin request'));
    next();
  });
  // Plain HTTP on a private address: no HSTS, the rest as on the public listener.
  app.use(securityHeaders({ hstsMaxAgeSeconds: 0 }));
  app.use(requireAdminToken(deps.adminToken));
  app.use(express.json({ limit: 64 * 1024 }));

  const accountId = (raw: string) => {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(raw)) {
      throw new ApiError(400, 'invalid_uuid', 'accountId must be a UUID.', [{ path: 'path.accountId', problem: 'must be a UUID' }]);
    }
    return raw.toLowerCase();
  };

  app.post('/admin/accounts', async (req, res) => {
    const name = (req.body as { name?: unknown } | undefined)?.name;
    if (typeof name !== 'string' || name.trim().length === 0 || name.length > 200) {
      throw new ApiError(400, 'validation_failed', 'name must be a non-empty string of at most 200 characters.', [{ path: 'body.name', problem: 'must be a non-empty string (max 200)' }]);
    }
    const created = await accounts.createAccount(name.trim());
    req.log.info({ accountId: created.accountId }, 'account created');
    res.status(201).json(created);
  });

  app.get('/admin/accounts/:accountId', async (req, res) => {
    const account = await accounts.getAccount(accountId(req.params.accountId));
    res.json({
      accountId: account.accountId,
      name: account.name,
      createdAt: account.createdAt,
      hasApiKey: account.apiKey !== null,
      limits: resolveLimits(account.limits),
    });
  });

  app.get('/admin/accounts/:accountId/api-key', async (req, res) => {
    const id = accountId(req.params.accountId);
    res.json({ accountId: id, apiKey: await accounts.showKey(id) });
  });

  app.post('/admin/accounts/:accountId/api-key', async (req, res) => {
    const id = accountId(req.params.accountId);
    const { apiKey, created } = await accounts.createKey(id);
    req.log.info({ accountId: id, created }, 'api key create requested');
    res.status(created ? 201 : 200).json({ accountId: id, apiKey });
  });

  app.post('/admin/accounts/:accountId/api-key/rotate', async (req, res) => {
    const id = accountId(req.params.accountId);
    const apiKey = await accounts.rotateKey(id);
    req.log.info({ accountId: id }, 'api key rotated');
    res.json({ accountId: id, apiKey });
  });

  app.delete('/admin/accounts/:accountId/api-key', async (req, res) => {
    const id = accountId(req.params.accountId);
    await accounts.deleteKey(id);
    req.log.info({ accountId: id }, 'api key deleted');
    res.json({ accountId: id, deleted: true });
  });

  app.get('/admin/accounts/:accountId/rate-limits', async (req, res) => {
    const account = await accounts.getAccount(accountId(req.params.accountId));
    res.json({ accountId: account.accountId, ...resolveLimits(account.limits), defaults: DEFAULT_RATE_LIMITS });
  });

  app.patch('/admin/accounts/:accountId/rate-limits', async (req, res) => {
    const id = accountId(req.params.accountId);
    const change = parseLimits(req.body);
    const current = resolveLimits((await accounts.getAccount(id)).limits);
    const next = { ...current, ...change };
    // The events bucket's state must stay meaningful within the rate-limit store's TTL (policies.ts, MAX_STATE_AGE_MS).
    if (next.eventsBurst > next.eventsPerSecond * 3600) {
      throw new ApiError(400, 'validation_failed', 'eventsBurst may be at most 3600 x eventsPerSecond.', [{ path: 'body.eventsBurst', problem: 'is more than 3600 x eventsPerSecond' }]);
    }
    const stored = await accounts.setLimits(id, change);
    req.log.info({ accountId: id, limits: stored }, 'rate limits changed');
    res.json({ accountId: id, ...resolveLimits(stored), defaults: DEFAULT_RATE_LIMITS });
  });

  // After a master key rotation (the old key in *_PREVIOUS): everything sealed under a previous key
  // (or stored in clear by an older version) is re-sealed under the current one. Once all `failed`
  // lists are empty and every `resealed` count is 0 on a second run, the previous keys can go.
  app.post('/admin/reseal-secrets', async (req, res) => {
    const [apiKeys, webhookSecrets, dkimKeys] = await Promise.all([accounts.resealAll(), deps.resealWebhookSecrets(), deps.resealDkimKeys()]);
    const result = { apiKeys, webhookSecrets, dkimKeys };
    req.log.info(result, 'secrets re-sealed under the current keys');
    res.json(result);
  });

  app.use((_req, _res, next) => next(new ApiError(404, 'route_not_found', 'No admin operation exists at this path.')));
  app.use(((err, req, res, next) => {
    if (err instanceof AccountNotFound) err = new ApiError(404, 'account_not_found', 'No account with this id.');
    if (err instanceof ApiKeyNotFound) err = new ApiError(404, 'api_key_not_found', 'The account has no API key.');
    errorHandler(err, req, res, next);
  }) as express.ErrorRequestHandler);
  return app;
}
