// What the sender-profile and email-template use cases are given (server.ts wires them). Only
// `store` is needed by senderForSend/templateForSend, so other use cases (sending) can call them
// with their own deps.
import type { Store } from '@mailer/store';
import type { FormsUsing } from '../clients/forms';
import type { NewslettersUsing } from '../clients/rss-newsletters';
import type { SubscriberLookup } from './render-values';

export interface CatalogDeps {
  store: Store;
  now: () => Date;
  newId: () => string;
  /** MAIL_ALLOWED_FROM_DOMAINS (lower case; empty = any). */
  allowedFromDomains: readonly string[];
  /** The subscriber service's view of an address (render preview); absent: every address is unknown. */
  subscribers?: SubscriberLookup;
  /** The form service's view of the forms naming a profile or template (delete checks); absent: no form names any. */
  forms?: Pick<FormsUsing, 'formsUsing'>;
  /** The rss service's view of the newsletters sending from a profile (delete checks); absent: none does. */
  newsletters?: Pick<NewslettersUsing, 'newslettersUsing'>;
}
