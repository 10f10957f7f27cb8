import type { RequestHandler } from 'express';
import type { GatewayMetrics } from '../metrics';
import { rateLimitHeaders } from '../ratelimit/decide';
import { accountBudgetKey, type RateLimiter } from '../ratelimit/limiter';
import { defaultApiLimits, eventsLimits, resolveLimits } from '../ratelimit/policies';
import { rateLimited } from './authenticate';

const EVENTS_PATH = /^\/events\/?$/i;

/**
 * The account's budget, shared by every replica: /events has its own (100/s, burst 500), every
 * other authenticated request spends the default one (300/min and 2,000/h). Limits come from the
 * account record read during authentication, so an operator's change applies to the next request.
 */
export function accountRateLimit(deps: { limiter: RateLimiter; metrics: GatewayMetrics }): RequestHandler {
  return async (req, res, next) => {
    const account = req.account!;
    const configured = resolveLimits(account.limits);
    const bucket = EVENTS_PATH.test(req.path) ? 'events' : 'default';
    const limits = bucket === 'events' ? eventsLimits(configured) : defaultApiLimits(configured);
    const decision = await deps.limiter.consume(accountBudgetKey(bucket, account.accountId), limits);
    res.set(rateLimitHeaders(limits, decision));
    if (!decision.allowed) {
      deps.metrics.rateLimitRejections.inc({ bucket });
      throw rateLimited(limits, decision);
    }
    next();
  };
}
