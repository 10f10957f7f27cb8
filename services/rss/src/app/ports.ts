// What the use cases need from outside the service, as interfaces: the feed reader (clients/feeds.ts
// adapts the feed fetcher of domain/feed.ts), the services that validate ids (clients/peers.ts), and
// the mail of a released issue (the audience pages of the messaging service).
import type { Issue, ReadItem } from '../domain/issues';
import type { Newsletter } from '../domain/newsletter';

/** A feed as read: its details and items, in feed order. */
export interface FeedSnapshot {
  title: string;
  siteUrl: string | null;
  feedUrl: string | null;
  /**
   * Their HTML not sanitized yet: domain/issues.ts cleanItem makes an item fit to keep or show. It
   * costs several times the parse, so callers clean only what they keep or show (a poll: the new
   * items), never a whole feed on every poll.
   */
  items: ReadItem[];
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
 * The issue's mail, through the messaging service's AudienceSendService: the newsletter's audience
 * (segment, topic, ACTIVE, not suppressed) walked page by page. A page asked again (a retry, a restart
 * mid-send) queues nobody twice: each recipient gets at most one mail per issue.
 */
export interface IssueMail {
  /** Queues the recipients after `after`; `next` is the cursor of the following page, '' at the end. */
  queuePage(issue: Issue, newsletter: Newsletter, after: string): Promise<{ recipientCount: number; next: string }>;
  /** Delivered mails by issue id, for issues that have mail. */
  deliveredCounts(accountId: string, issueIds: string[]): Promise<Map<string, number>>;
}
