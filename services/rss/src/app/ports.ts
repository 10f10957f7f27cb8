// What the use cases need from outside the service, as interfaces: the feed reader (clients/feeds.ts
// adapts the feed fetcher of domain/feed.ts), the services that validate ids (clients/peers.ts), and
// the sending of a released issue (a port that the audience fan-out of the messaging service plugs
// into; until it does, a RELEASED issue stays RELEASED).
import type { Issue, ItemSnapshot } from '../domain/issues';
import type { Newsletter } from '../domain/newsletter';

/** A feed as read: its details and items, in feed order. */
export interface FeedSnapshot {
  title: string;
  siteUrl: string | null;
  feedUrl: string | null;
  items: ItemSnapshot[];
}

export type FeedRead = { kind: 'feed'; feed: FeedSnapshot; etag: string | null; lastModified: string | null; url: string } | { kind: 'not_modified' };

export interface FeedReader {
  /**
   * One conditional GET through the outbound guard, parsed. Throws an error whose `code` is one of
   * the feed error codes (feed_unreachable, feed_too_large, feed_timeout, feed_not_allowed,
   * feed_too_many_redirects, feed_http_error, feed_unreadable).
   */
  read(url: string, validators: { etag: string | null; lastModified: string | null }): Promise<FeedRead>;
}

/** Ids a newsletter names, checked against the services that own them (NOT_FOUND passes through). */
export interface AccountCatalog {
  requireSegment(accountId: string, segmentId: string): Promise<void>;
  requireTopic(accountId: string, topicId: string): Promise<void>;
  requireSenderProfile(accountId: string, senderProfileId: string): Promise<void>;
}

/**
 * Sends a RELEASED issue to the newsletter's audience (RELEASED -> SENDING -> SENT, counts on the
 * issue). Called once per release; must be idempotent per issue, since a restart calls it again for
 * issues still RELEASED.
 */
export interface IssueSender {
  send(issue: Issue, newsletter: Newsletter): Promise<void>;
}

/** No audience sending in this build: released issues wait, RELEASED, for the sender to be plugged in. */
export const holdReleasedIssues: IssueSender = {
  async send() {},
};
