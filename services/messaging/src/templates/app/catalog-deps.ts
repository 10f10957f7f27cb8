// What the sender-profile and email-template use cases are given (server.ts wires them). Only
// `store` (and `domains` for senderForSend) is needed by senderForSend/templateForSend, so other use
// cases (sending) can call them with their own deps.
import type { Store } from '@mailer/store';
import type { FormsUsing } from '../../clients/forms';
import type { NewslettersUsing } from '../../clients/rss-newsletters';
import type { BroadcastRepository } from '../../audiences/store/broadcasts';
import type { SubscriberLookup } from '../../mail/app/render-values';
import type { DomainPolicy } from './sending-domains';

export interface CatalogDeps {
  store: Store;
  now: () => Date;
  newId: () => string;
  /** MAIL_ALLOWED_FROM_DOMAINS (lower case; empty = any). */
  allowedFromDomains: readonly string[];
  /** MAIL_DOMAIN_VERIFICATION: a profile's fromEmail domain must be VERIFIED in the account (when required). */
  domains: Pick<DomainPolicy, 'requireVerified'>;
  /** The subscriber service's view of an address (render preview); absent: every address is unknown. */
  subscribers?: SubscriberLookup;
  /** The form service's view of the forms naming a profile or template (delete checks); absent: no form names any. */
  forms?: Pick<FormsUsing, 'formsUsing'>;
  /** The rss service's view of the newsletters sending from a profile (delete checks); absent: none does. */
  newsletters?: Pick<NewslettersUsing, 'newslettersUsing'>;
  /** The broadcasts naming a profile or template (delete checks: SCHEDULED and SENDING ones); absent: none does. */
  broadcasts?: Pick<BroadcastRepository, 'naming'>;
}
