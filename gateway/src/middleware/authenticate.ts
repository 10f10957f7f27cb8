import type { RequestHandler, Response } from 'express';
import type { AccountStore } from '../accounts/accounts';
import { ApiError } from '../errors';
import type { GatewayMetrics } from '../metrics';
import { rateLimitHeaders, type Decision, type Limit } from '../ratelimit/decide';
import { addressBudgetKey, type RateLimiter } from '../ratelimit/limiter';
import { unauthenticatedLimits } from '../ratelimit/policies';

const INVALID_MESSAGE = 'The API key is not valid.';
const WWW_AUTHENTICATE = { 'WWW-Authenticate': 'ApiKey header="X-API-Key"' };

export function rateLimited(limits: Limit[], decision: Decision): ApiError {
  return new ApiError(
    429,
    'rate_limited',
    `Rate limit reached. Retry after ${decision.retryAfterSeconds} s.`,
    undefined,
    rateLimitHeaders(limits, decision),
  );
}

export interface AuthenticateDeps {
  accounts: AccountStore;
  limiter: RateLimiter;
  metrics: GatewayMetrics;
  unauthenticatedPerMinute: number;
}

/**
 * X-API-Key authentication against the shared accounts (AccountStore: a leased watched copy, so a
 * rotated or deleted key is refused by every replica the moment the change returned).
 *
 * Failures are limited per client address. The budget is checked before the lookup: once an
 * address has used it up, even a correct guess is answered 429, so guessing is throttled rather
 * than merely answered differently.
 */
export function authenticate(deps: AuthenticateDeps): RequestHandler {
  const limits = unauthenticatedLimits(deps.unauthenticatedPerMinute);

  const refuse = async (res: Response, budgetKey: string, error: ApiError): Promise<never> => {
    const decision = await deps.limiter.consume(budgetKey, limits);
    res.set(rateLimitHeaders(limits, decision));
    if (!decision.allowed) {
      deps.metrics.rateLimitRejections.inc({ bucket: 'unauthenticated' });
      throw rateLimited(limits, decision);
    }
    throw error;
  };

  return async (req, res, next) => {
    const budgetKey = addressBudgetKey(req.ip ?? 'unknown');
    const budget = await deps.limiter.peek(budgetKey, limits);
    if (!budget.allowed) {
      deps.metrics.rateLimitRejections.inc({ bucket: 'unauthenticated' });
      throw rateLimited(limits, budget);
    }

    const presented = req.headers['x-api-key'];
    if (presented === undefined) {
      const bearer = /^\s*bearer\b/i.test(req.headers.authorization ?? '');
      return refuse(
        res,
        budgetKey,
        new ApiError(
          401,
          'api_key_missing',
          bearer
            ? 'Authorization: Bearer is not accepted. Send the API key in the X-API-Key header.'
            : 'The X-API-Key header is missing.',
          undefined,
          WWW_AUTHENTICATE,
        ),
      );
    }
    // Blank, masked, unknown, rotated-away and deleted keys all get the same answer.
    const account = await deps.accounts.authenticate(String(presented));
    if (!account) return refuse(res, budgetKey, new ApiError(401, 'api_key_invalid', INVALID_MESSAGE, undefined, WWW_AUTHENTICATE));

    req.account = account;
    req.log = req.log.child({ accountId: account.accountId });
    next();
  };
}
