// The services that own what a newsletter names: segments (segment service), topics (subscriber
// service) and sender profiles (messaging service), asked whenever a newsletter is saved. Their own
// errors pass through (segment_not_found, topic_not_found, sender_profile_not_found); when one does
// not answer, 503 service_unavailable with a fixed text (the cause is logged here).
import { createClient, peerClient, type Logger } from '@mailer/kit';
import { segmentV1, senderProfilesV1, subscriberV1 } from '@mailer/proto';
import type { AccountCatalog } from '../app/ports';

export interface PeerAddresses {
  segment: string;
  subscriber: string;
  messaging: string;
}

export function accountCatalog(addresses: PeerAddresses, deadlineMs: number, logger?: Logger): AccountCatalog & { close(): void } {
  const peer = (service: string, what: string) => ({
    service,
    errorId: 'service_unavailable',
    message: `The ${service} service, whose ${what} a newsletter names, is unavailable; retry later.`,
    logger,
  });
  const segments = peerClient(createClient(segmentV1.SegmentServiceClient, addresses.segment, deadlineMs), peer('segment', 'segments'));
  const subscribers = peerClient(createClient(subscriberV1.SubscriberServiceClient, addresses.subscriber, deadlineMs), peer('subscriber', 'topics'));
  const profiles = peerClient(createClient(senderProfilesV1.SenderProfileServiceClient, addresses.messaging, deadlineMs), peer('messaging', 'sender profiles'));
  return {
    async requireSegment(accountId, segmentId) {
      await segments.getSegment({ accountId, segmentId });
    },
    async requireTopic(accountId, topicId) {
      await subscribers.getTopic({ accountId, topicId });
    },
    async requireSenderProfile(accountId, senderProfileId) {
      await profiles.getSenderProfile({ accountId, senderProfileId });
    },
    close() {
      segments.close();
      subscribers.close();
      profiles.close();
    },
  };
}
