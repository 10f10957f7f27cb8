// The message a delivery posts (the API contract "Webhooks"): body `{id, type, createdAt, data}` with `data` per
// event type, and the Standard Webhooks headers. The body is built once, when the delivery is created,
// and stored: every attempt posts and signs the same bytes.
import { Webhook } from 'standardwebhooks';
import { Lru } from '@mailer/kit';
import type { DomainFact } from '@mailer/nats/facts';

export const TEST_EVENT_TYPE = 'webhook.test';

/** The `data` of a fact's webhook event. */
export function eventData(fact: DomainFact): Record<string, unknown> {
  switch (fact.type) {
    case 'subscriber.tag_added':
    case 'subscriber.tag_removed':
      return { ...fact.subscriber, tagId: fact.tagId };
    case 'subscriber.created':
    case 'subscriber.updated':
    case 'subscriber.deleted':
    case 'subscriber.confirmed':
    case 'subscriber.unsubscribed':
      return { ...fact.subscriber };
    case 'form.submitted':
      return { formId: fact.formId, email: fact.email, subscriberId: fact.subscriberId, decision: fact.decision };
    case 'rss.issue_sent':
      return { newsletterId: fact.newsletterId, issueId: fact.issueId, itemCount: fact.itemCount, recipientCount: fact.recipientCount };
    case 'broadcast.sent':
      return { broadcastId: fact.broadcastId, recipientCount: fact.recipientCount };
    default: {
      // email.* (the delivery fact, `at` being its time) and event.received (the recorded event).
      const { type: _type, occurredAt, ...rest } = fact as DomainFact & Record<string, unknown>;
      return fact.type.startsWith('email.') ? { ...rest, at: occurredAt } : rest;
    }
  }
}

export const webhookBody = (id: string, type: string, createdAt: string, data: unknown): string => JSON.stringify({ id, type, createdAt, data });

/**
 * The headers of one attempt, signed with every secret in `secrets` (the current one, plus the previous
 * during a rotation's overlap: space-separated signatures, as Standard Webhooks defines), so a receiver
 * holding either one verifies.
 */
export function webhookHeaders(eventId: string, body: string, secrets: string[], now: Date): Record<string, string> {
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => signer(secret).sign(eventId, now, body)).join(' '),
  };
}

/** Signers by secret, so that a secret's key is decoded once, not per attempt. */
const signers = new Lru<string, Webhook>(10_000);
function signer(secret: string): Webhook {
  let wh = signers.get(secret);
  if (!wh) signers.set(secret, (wh = new Webhook(secret)));
  return wh;
}

/** The Content-Type of a subscription's deliveries: the same bytes either way. */
export const contentTypeHeader = (deliveryContentType: string): string =>
  deliveryContentType === 'text/plain' ? 'text/plain; charset=utf-8' : 'application/json';
