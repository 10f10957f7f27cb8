// The webhook events a subscription can name (the API contract) and which DOMAIN facts they are.
// Each event is a fact type of the shared definitions (`@mailer/nats/facts`), so an event whose fact
// is renamed or removed stops compiling here instead of silently never firing.
import type { FactType } from '@mailer/nats/facts';

export const WEBHOOK_EVENTS = [
  'subscriber.created',
  'subscriber.updated',
  'subscriber.deleted',
  'subscriber.confirmed',
  'subscriber.unsubscribed',
  'subscriber.tag_added',
  'subscriber.tag_removed',
  'form.submitted',
  'email.sent',
  'email.delivered',
  'email.bounced',
  'email.opened',
  'email.clicked',
  'email.complained',
  'event.received',
  'rss.issue_sent',
  'broadcast.sent',
] as const satisfies readonly FactType[];

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
/** What a subscription listens to: one event, or `*` for all of them. */
export type SubscriptionEvent = WebhookEvent | '*';

const KNOWN = new Set<string>(WEBHOOK_EVENTS);

/** The event a subscription request names, or undefined (the API answers `400 unknown_webhook_event`). */
export function parseSubscriptionEvent(value: string): SubscriptionEvent | undefined {
  return value === '*' || KNOWN.has(value) ? (value as SubscriptionEvent) : undefined;
}

/**
 * Whether a subscription receives a fact. Facts that are no webhook event (catalog changes, topic
 * changes, field value changes) reach no subscription, not even `*`: `*` means every webhook event.
 */
export function subscriptionReceives(subscription: SubscriptionEvent, fact: FactType): boolean {
  if (!KNOWN.has(fact)) return false;
  return subscription === '*' || subscription === fact;
}
