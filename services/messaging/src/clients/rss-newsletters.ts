// The rss service as the messaging service sees it: which RSS newsletters send from a sender profile
// (asked before deleting one). When it does not answer, 503 service_unavailable: a delete that
// cannot be proven safe is not done.
import { createClient, peerClient, TIME_LIMITS, type Logger } from '@mailer/kit';
import { rssNewslettersV1 } from '@mailer/proto';

export interface NewslettersUsing {
  /** How many of the account's newsletters send from the profile, and up to 50 of them. */
  newslettersUsing(accountId: string, senderProfileId: string): Promise<{ count: number; newsletters: Array<{ id: string; name: string }> }>;
  close(): void;
}

export function rssNewslettersClient(address: string, logger?: Logger): NewslettersUsing {
  const client = peerClient(createClient(rssNewslettersV1.RssNewsletterServiceClient, address, TIME_LIMITS.peerCall), {
    service: 'rss',
    errorId: 'service_unavailable',
    message: 'The rss service, which knows the newsletters sending from this sender profile, is unavailable; retry later.',
    logger,
  });
  return {
    async newslettersUsing(accountId, senderProfileId) {
      const res = await client.countRssNewslettersUsing({ accountId, senderProfileId });
      return { count: res.count, newsletters: res.newsletters };
    },
    close: () => client.close(),
  };
}
