// The render-time `subscriber` value (the API contract "Email templates"): `{email, firstName, fields:
// {<personalizationTagName>: display value}}` when the address is a subscriber of the account, else
// `{email}`. The subscriber service owns subscribers; it is asked through SubscriberLookup.
import type { RenderValues } from '@mailer/templates';

/** A subscriber as the templates see it. */
export interface SubscriberView {
  id: string;
  email: string;
  firstName: string | null;
  /** Display value by personalizationTagName. */
  fields: Record<string, string>;
}

export interface SubscriberLookup {
  /** The account's subscriber with this canonical address, or null. */
  byEmail(accountId: string, email: string): Promise<SubscriberView | null>;
}

/** The `subscriber` variable for a canonical address. */
export async function subscriberValueFor(lookup: SubscriberLookup | undefined, accountId: string, email: string): Promise<RenderValues['subscriber']> {
  const found = lookup ? await lookup.byEmail(accountId, email) : null;
  if (!found) return { email };
  // A null-prototype copy: a personalizationTagName can never reach Object.prototype members.
  const fields = Object.assign(Object.create(null) as Record<string, string>, found.fields);
  return { email: found.email, firstName: found.firstName ?? '', fields };
}
