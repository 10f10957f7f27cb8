// The feed reader the use cases see (app/ports.ts FeedReader), over the feed fetcher
// (clients/feed-fetcher.ts: outbound guard, conditional GET, limits) and parser (domain/feed.ts:
// RSS 2.0, Atom, RDF, JSON Feed). Items get empty strings for absent members, the shape templates and
// the store use (their HTML is sanitized when a caller keeps or shows one: cleanItem); FeedErrors
// pass through (their `code` is the errorId).
import type { Outbound } from '@mailer/outbound';
import type { FeedReader } from '../app/ports';
import type { FeedItem } from '../domain/feed';
import type { ReadItem } from '../domain/issues';
import { createFeedFetcher, type FeedLimits } from './feed-fetcher';

export const readItem = (i: FeedItem): ReadItem => ({
  key: i.key,
  guid: i.guid ?? '',
  title: i.title ?? '',
  link: i.link ?? '',
  publishedAt: i.publishedAt,
  author: i.author ?? '',
  imageUrl: i.imageUrl ?? '',
  untrustedHtml: i.untrustedHtml,
});

export function feedReader(outbound: Pick<Outbound, 'request'>, limits?: FeedLimits): FeedReader {
  const fetcher = createFeedFetcher(outbound, limits);
  return {
    async read(url, validators) {
      const got = await fetcher.fetch(url, validators);
      if (got.kind === 'not_modified') return got;
      const { feed } = got;
      return {
        kind: 'feed',
        feed: { title: feed.title ?? '', siteUrl: feed.siteUrl, feedUrl: feed.feedUrl, items: feed.items.map(readItem) },
        etag: got.etag,
        lastModified: got.lastModified,
        url: got.url,
      };
    },
  };
}
