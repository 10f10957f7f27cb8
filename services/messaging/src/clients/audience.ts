// The subscriber service's AudienceService as an audience send sees it: one page of ACTIVE recipients
// (in the topic, in the segment) after a cursor. Its own errors pass through (segment_not_found,
// topic_not_found); when it does not answer, PeerUnavailable (the caller retries the page).
import { createClient, peerClient, type Logger } from '@mailer/kit';
import { audienceV1 } from '@mailer/proto';
import type { AudienceLookup } from '../app/audience-send';

/** A page reads up to 1,000 subscribers and may wait for the segment service: more than a lookup's 2 s. */
const PAGE_DEADLINE_MS = 30_000;

export function audienceClient(address: string, logger?: Logger): AudienceLookup & { close(): void } {
  const client = peerClient(createClient(audienceV1.AudienceServiceClient, address, PAGE_DEADLINE_MS), {
    service: 'subscriber',
    errorId: 'service_unavailable',
    message: 'The subscriber service is unavailable; retry later.',
    logger,
  });
  return {
    async page(accountId, q) {
      const res = await client.listAudience({ accountId, segmentId: q.segmentId ?? undefined, topicId: q.topicId ?? undefined, afterSubscriberId: q.after, pageSize: q.pageSize });
      return {
        recipients: res.recipients.map((r) => ({ id: r.id, email: r.email, firstName: r.firstName ?? null, fields: r.fields })),
        next: res.nextAfterSubscriberId,
      };
    },
    close: () => client.close(),
  };
}
