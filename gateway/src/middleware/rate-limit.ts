import type { RequestHandler } from 'express';
import type { GatewayMetrics } from '../metrics';
import { rateLimitHeaders, type Limit } from '../ratelimit/decide';
import { accountBudgetKey, type RateLimiter } from '../ratelimit/limiter';
import { defaultApiLimits, eventsLimits, resolveLimits, type RateLimits } from '../ratelimit/policies';
import { rateLimited } from './authenticate';

const EVENTS_PATH = /^\/events\/?$/i;

interface Budgets {
  events: Limit[];
  default: Limit[];
}

/**
 * The account's budget, shared by every replica: /events has its own (100/s, burst 500), every
 * other authenticated request spends the default one (300/min and 2,000/h). Limits come from the
 * account record read during authentication, so an operator's change applies to the next request.
 */
export function accountRateLimit(deps: { limiter: RateLimiter; metrics: GatewayMetrics }): RequestHandler {
  // The limits of an account's stored `limits` object (the same object until an operator changes
  // the record, which brings a new one): resolved once, not on every request.
  const resolved = new WeakMap<object, Budgets>();
  const budgets = (limits: Partial<RateLimits>): Budgets => {
    let b = resolved.get(limits);
    if (!b) {
      const configured = resolveLimits(limits);
      b = { events: eventsLimits(configured), default: defaultApiLimits(configured) };
      resolved.set(limits, b);
    }
    return b;
  };
  return async (req, res, next) => {
    const account = req.account!;
    const bucket = EVENTS_PATH.test(req.path) ? 'events' : 'default';
    const limits = budgets(account.limits)[bucket];
    const decision = await deps.limiter.consume(accountBudgetKey(bucket, account.accountId), limits);
    res.set(rateLimitHeaders(limits, decision));
    if (!decision.allowed) {
      deps.metrics.rateLimitRejections.inc({ bucket });
      throw rateLimited(limits, decision);
    }
    next();
  };
}
