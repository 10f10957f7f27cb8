// The feed reader the use cases see (app/ports.ts FeedReader), over the feed fetcher of the i15-feed
// branch (clients/feed-fetcher.ts + domain/feed.ts: outbound guard, conditional GET, limits, RSS 2.0,
// Atom, RDF and JSON Feed). Until that branch is merged every read fails with feed_unreadable.
import type { Outbound } from '@mailer/outbound';
import type { FeedReader } from '../app/ports';

export function feedReader(_outbound: Outbound): FeedReader {
  return {
    async read() {
      throw Object.assign(new Error('feed reading is not built yet'), { code: 'feed_unreadable' });
    },
  };
}
