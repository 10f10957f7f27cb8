import type { SubscriberDoc } from '../store/subscribers';

/**
 * Domain events carry the subscriber's whole public state, so a consumer (the segment
 * service's contact projection, webhooks) can rebuild a contact without calling back.
 */
export function subscriberEvent(type: 'subscriber.created' | 'subscriber.updated' | 'subscriber.deleted', doc: SubscriberDoc) {
  return {
    subject: `domain.${type}`,
    payload: {
      type,
      accountId: doc.accountId,
      occurredAt: doc.updatedAt,
      subscriber: {
        id: doc._id,
        email: doc.email,
        firstName: doc.firstName,
        subscriberStatus: doc.status,
        tags: doc.tags,
        topicIds: doc.topicIds,
        registeredAt: doc.registeredAt,
      },
    },
  };
}
