// The save-time check of a subscription's target URL (the API contract "Webhooks": `400 webhook_target_not_allowed`):
// the outbound guard's syntax / scheme / literal address check, then what the host name resolves to now.
//
// Decision (published in the OpenAPI document): a name that resolves only to refused addresses is
// refused when saved; a name that does not resolve (yet), or not within TARGET_DNS_TIMEOUT_MS, is
// saved, because DNS can change either way: every attempt checks the address it actually connects to.
import { TIME_LIMITS } from '@mailer/kit';
import { checkTarget, checkUrl, type Lookup, type OutboundSettings } from '@mailer/outbound';
import type { TargetCheck } from './subscriptions';

/** The gateway's deadline allows for it. */
export const TARGET_DNS_TIMEOUT_MS = TIME_LIMITS.targetResolve;

export function guardTargetCheck(settings: OutboundSettings, opts: { lookup?: Lookup; timeoutMs?: number } = {}): TargetCheck {
  return async (url) => {
    const syntax = checkUrl(url, settings);
    if (!syntax.ok) return syntax;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), opts.timeoutMs ?? TARGET_DNS_TIMEOUT_MS);
    });
    try {
      const resolved = await Promise.race([checkTarget(syntax.url, settings, { lookup: opts.lookup }), timedOut]);
      if (!resolved || (!resolved.ok && resolved.code === 'dns_failed')) return syntax;
      return resolved;
    } finally {
      clearTimeout(timer);
    }
  };
}
