// The subscriber service's AudienceService as the messaging service sees it: one page of ACTIVE
// recipients (in the topic, in the segment) after a cursor (an RSS issue); every reader of the
// account with the rule that leaves it out, and named readers checked again (a broadcast); the
// recipients of a batch of mail by address. Its own errors pass through (segment_not_found,
// topic_not_found); when it does not answer, PeerUnavailable (the caller retries).
import { createClient, peerClient, protoEnum, type Logger } from '@mailer/kit';
import { audienceV1, subscriberV1 } from '@mailer/proto';
import type { BatchRecipientLookup } from '../mail/app/accept-batch';
import type { AudienceLookup, AudienceRecipient } from '../audiences/app/audience-send';
import type { AudienceReader, BroadcastAudience } from '../audiences/app/broadcast-ports';

/** A page reads up to 1,000 subscribers and may wait for the segment service: more than a lookup's 2 s. */
const PAGE_DEADLINE_MS = 30_000;

const Exclusions = protoEnum(audienceV1.AudienceExclusion, 'AUDIENCE_EXCLUSION_');
const Statuses = protoEnum(subscriberV1.SubscriberStatus, 'SUBSCRIBER_STATUS_');

const recipientOf = (r: { id: string; email: string; firstName?: string; fields: Record<string, string> }): AudienceRecipient => ({ id: r.id, email: r.email, firstName: r.firstName ?? null, fields: r.fields });
const readerOf = (r: audienceV1.AudienceRecipient): AudienceReader => ({ ...recipientOf(r), exclusion: Exclusions.tryFromProto(r.exclusion) ?? null });

export function audienceClient(address: string, logger?: Logger): AudienceLookup & BroadcastAudience & BatchRecipientLookup & { close(): void } {
  const client = peerClient(createClient(audienceV1.AudienceServiceClient, address, PAGE_DEADLINE_MS), {
    service: 'subscriber',
    errorId: 'service_unavailable',
    message: 'The subscriber service is unavailable; retry later.',
    logger,
  });
  return {
    async page(accountId, q) {
      const res = await client.listAudience({ accountId, segmentId: q.segmentId ?? undefined, topicId: q.topicId ?? undefined, afterSubscriberId: q.after, pageSize: q.pageSize, withExcluded: false });
      return { recipients: res.recipients.map(recipientOf), next: res.nextAfterSubscriberId };
    },
    async readers(accountId, q) {
      const res = await client.listAudience({ accountId, segmentId: q.segmentId ?? undefined, topicId: q.topicId ?? undefined, afterSubscriberId: q.after, pageSize: q.pageSize, withExcluded: true });
      return { readers: res.recipients.map(readerOf), next: res.nextAfterSubscriberId };
    },
    async check(accountId, q) {
      if (!q.subscriberIds.length) return [];
      const res = await client.checkAudience({ accountId, segmentId: q.segmentId ?? undefined, topicId: q.topicId ?? undefined, subscriberIds: q.subscriberIds });
      return res.readers.map(readerOf);
    },
    async recipientsByEmail(accountId, emails) {
      if (!emails.length) return new Map();
      const res = await client.findRecipients({ accountId, emails });
      return new Map(res.recipients.map((r) => [r.email, { ...recipientOf(r), status: Statuses.tryFromProto(r.status) ?? 'ACTIVE' }]));
    },
    close: () => client.close(),
  };
}
