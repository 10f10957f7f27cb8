// Which facts a webhook subscription receives (the API contract: the event list and `*`).
import { FACT_TYPES } from '@mailer/nats/facts';
import { parseSubscriptionEvent, subscriptionReceives, WEBHOOK_EVENTS } from '../src/domain/webhook-events';
import { eventData } from '../src/domain/webhook-message';

describe('parseSubscriptionEvent', () => {
  it('accepts every event of the API contract and *', () => {
    for (const e of WEBHOOK_EVENTS) expect(parseSubscriptionEvent(e)).toBe(e);
    expect(parseSubscriptionEvent('*')).toBe('*');
  });
  it('refuses anything else, including fact types that are no webhook event and case variants', () => {
    for (const bad of ['', 'subscriber', 'subscriber.*', 'Subscriber.created', 'tag.created', 'field.deleted', 'subscriber.topics_changed', ' email.sent', '**']) {
      expect(parseSubscriptionEvent(bad)).toBeUndefined();
    }
  });
});

describe('subscriptionReceives', () => {
  it('a subscription to one event receives exactly that fact', () => {
    for (const fact of FACT_TYPES) expect(subscriptionReceives('email.bounced', fact)).toBe(fact === 'email.bounced');
  });
  it('* receives every webhook event and no other fact', () => {
    const received = FACT_TYPES.filter((fact) => subscriptionReceives('*', fact));
    expect(received.sort()).toEqual([...WEBHOOK_EVENTS].sort());
    expect(subscriptionReceives('*', 'topic.created')).toBe(false);
  });
});

describe('broadcast.sent', () => {
  it('is a webhook event whose data is {broadcastId, recipientCount}', () => {
    expect(parseSubscriptionEvent('broadcast.sent')).toBe('broadcast.sent');
    const fact = { type: 'broadcast.sent' as const, accountId: 'acc', occurredAt: '2026-01-05T08:00:00.000Z', broadcastId: 'b-1', recipientCount: 4500 };
    expect(eventData(fact)).toEqual({ broadcastId: 'b-1', recipientCount: 4500 });
  });
});
