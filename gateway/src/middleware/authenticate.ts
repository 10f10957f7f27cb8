import type { Request, RequestHandler, Response } from 'express';
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
 * Failures are limited per client address; only failures spend that budget and only failures are
 * refused by it. A valid key is authenticated first and never refused because of other requests'
 * failures: behind a proxy or NAT every customer shares one address, and a few wrong keys there must
 * not lock every customer out. An address over its budget gets 429 for a missing or wrong key,
 * cheaply: no budget write, the budget read from a watched copy, and a malformed key not even
 * looked up (a well-formed one costs the lookup a valid key costs). So a correct guess is admitted
 * even after the budget is spent; guessing stays hopeless (40 base62 characters, about 2^238 keys),
 * the budget keeps each failed attempt cheap and makes scanning visible in the metrics.
 */
export function authenticate(deps: AuthenticateDeps): RequestHandler {
  const limits = unauthenticatedLimits(deps.unauthenticatedPerMinute);

  const refuse = async (res: Response, budgetKey: string, error: ApiError): Promise<never> => {
    // An address already over its budget is refused from the watched copy, without a write.
    const budget = await deps.limiter.peek(budgetKey, limits);
    const decision = budget.allowed ? await deps.limiter.consume(budgetKey, limits) : budget;
    res.set(rateLimitHeaders(limits, decision));
    if (!decision.allowed) {
      deps.metrics.rateLimitRejections.inc({ bucket: 'unauthenticated' });
      throw rateLimited(limits, decision);
    }
    throw error;
  };

  // The client address (req.ip walks the trusted proxy hops) is only needed to refuse.
  const budgetKeyOf = (req: Request) => addressBudgetKey(req.ip ?? 'unknown');

  return async (req, res, next) => {
    const presented = req.headers['x-api-key'];
    if (presented === undefined) {
      const bearer = /^\s*bearer\b/i.test(req.headers.authorization ?? '');
      return refuse(
        res,
        budgetKeyOf(req),
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
    if (!account) return refuse(res, budgetKeyOf(req), new ApiError(401, 'api_key_invalid', INVALID_MESSAGE, undefined, WWW_AUTHENTICATE));

    req.account = account; // req.log names it from here on (request-context.ts)
    next();
  };
}
