// Whether a landing page on a custom domain may still be served. A page's domain is checked when the
// form is created, updated and published, but its account can lose the domain later: `verify` finds
// the ownership record gone (the domain changed hands) and turns it PENDING, or the page was published
// before MAIL_DOMAIN_VERIFICATION=required was turned on. So each page view asks the messaging service
// (which owns the sending domains and the setting) too, the answer cached per account and domain for
// FORM_PAGE_DOMAIN_RECHECK_SECONDS: a page whose account no longer has its domain verified is not
// found, within that time. (A verified domain cannot be deleted while a page is served on it.)
//
// When the messaging service does not answer, the last answer stands; with none, the page is served
// (it was verified at publish): readers are not turned away by an outage behind the page.
import { DomainError, PeerUnavailable, type Logger } from '@mailer/kit';
import type { MessagingCatalog } from '../clients/messaging';

export interface PageDomainCheck {
  /** Whether the account may serve landing pages on `domain` now (cached; see above). */
  servable(accountId: string, domain: string): Promise<boolean>;
}

/** Account and domain pairs remembered at most (oldest forgotten first): far more than live pages' domains. */
const MAX_REMEMBERED = 10_000;

export function pageDomainCheck(deps: { messaging: Pick<MessagingCatalog, 'requirePageDomain'>; recheckMs: number; now(): Date; logger: Pick<Logger, 'warn'> }): PageDomainCheck {
  const known = new Map<string, { servable: boolean; checkedAt: number }>();
  // Readers arriving together after the answer expired wait for one question, not one each.
  const asking = new Map<string, Promise<boolean>>();

  const remember = (key: string, servable: boolean) => {
    known.delete(key);
    if (known.size >= MAX_REMEMBERED) known.delete(known.keys().next().value!);
    known.set(key, { servable, checkedAt: deps.now().getTime() });
    return servable;
  };

  async function ask(key: string, accountId: string, domain: string): Promise<boolean> {
    try {
      await deps.messaging.requirePageDomain(accountId, domain);
      return remember(key, true);
    } catch (err) {
      if (err instanceof DomainError && err.errorId === 'page_domain_not_verified') return remember(key, false);
      if (!(err instanceof PeerUnavailable)) throw err;
      const last = known.get(key)?.servable ?? true;
      deps.logger.warn({ accountId, domain, servable: last }, 'messaging unavailable: a landing page\'s domain is served as last known');
      return remember(key, last);
    }
  }

  return {
    servable(accountId, domain) {
      const key = `${accountId} ${domain}`;
      const hit = known.get(key);
      if (hit && deps.now().getTime() - hit.checkedAt < deps.recheckMs) return Promise.resolve(hit.servable);
      let pending = asking.get(key);
      if (!pending) {
        pending = ask(key, accountId, domain).finally(() => asking.delete(key));
        asking.set(key, pending);
      }
      return pending;
    },
  };
}
