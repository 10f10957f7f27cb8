/**
 * Why a feed could not be read. `message` is written for the newsletter's `lastError` (the customer reads
 * it): it names what is wrong with the feed or its address, never an internal address, a stack or a secret.
 */
export type FeedErrorCode =
  | 'feed_unreachable' // DNS, connection refused or reset, TLS failure
  | 'feed_too_large' // more than the size limit (5 MB)
  | 'feed_timeout' // no complete answer within the time limit (10 s)
  | 'feed_not_allowed' // the URL or an address it resolves or redirects to is refused by the outbound guard
  | 'feed_too_many_redirects' // more than 3 redirects, or a redirect without a usable Location
  | 'feed_http_error' // an HTTP status other than 2xx / 304 / a followed redirect
  | 'feed_unreadable'; // not well-formed, not a feed, not in a supported format

export class FeedError extends Error {
  override readonly name = 'FeedError';
  constructor(
    readonly code: FeedErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export const isFeedError = (err: unknown): err is FeedError => err instanceof FeedError;
