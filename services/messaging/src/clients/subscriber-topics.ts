// The subscriber service's topics of one reader, for the preference page and one-click unsubscribe
// (ListTopics, GetSubscriberTopics, OptOutOfTopic, ReplaceSubscriberTopics over gRPC). Its own errors
// pass through (subscriber_not_found, topic_not_found); when it does not answer, PeerUnavailable.
import { createClient, peerClient, type Logger } from '@mailer/kit';
import { subscriberV1 } from '@mailer/proto';

export interface AccountTopic {
  topicId: string;
  label: string;
  description: string | null;
  active: boolean;
}
export interface ReaderTopic {
  topicId: string;
  subscribed: boolean;
  optedOut: boolean;
}

/** What the pages need from the subscriber service (a port, so use cases name no transport). */
export interface SubscriberTopics {
  accountTopics(accountId: string): Promise<AccountTopic[]>;
  readerTopics(accountId: string, subscriberId: string): Promise<ReaderTopic[]>;
  optOut(accountId: string, subscriberId: string, topicId: string, source: string): Promise<void>;
  /** The subscriptions become exactly `topicIds` (active topics), personal opt-outs of them lifted. */
  replace(accountId: string, subscriberId: string, topicIds: string[]): Promise<void>;
  close(): void;
}

export function subscriberTopicsClient(address: string, logger?: Logger): SubscriberTopics {
  const client = peerClient(createClient(subscriberV1.SubscriberServiceClient, address), {
    service: 'subscriber',
    errorId: 'service_unavailable',
    message: 'The subscriber service is unavailable; retry later.',
    logger,
  });
  return {
    async accountTopics(accountId) {
      const { items } = await client.listTopics({ accountId });
      return items.map((t) => ({ topicId: t.id, label: t.label, description: t.description ?? null, active: t.active }));
    },
    async readerTopics(accountId, subscriberId) {
      const { topics } = await client.getSubscriberTopics({ accountId, subscriberId });
      return topics.map((t) => ({ topicId: t.topicId, subscribed: t.subscribed, optedOut: t.optedOut }));
    },
    async optOut(accountId, subscriberId, topicId, source) {
      await client.optOutOfTopic({ accountId, subscriberId, topicId, source });
    },
    async replace(accountId, subscriberId, topicIds) {
      await client.replaceSubscriberTopics({ accountId, subscriberId, topicIds, overrideOptOuts: true });
    },
    close: () => client.close(),
  };
}
