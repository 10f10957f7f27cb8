// A feed reader failure as the API answers it: INVALID_ARGUMENT with the feed error's code as errorId
// (the gateway's catalogue answers feed_not_allowed 400 and the others 422), and as `lastError`.
import { DomainError, GrpcStatus, invalid } from '@mailer/kit';

export const FEED_ERROR_CODES = ['feed_unreachable', 'feed_too_large', 'feed_timeout', 'feed_not_allowed', 'feed_too_many_redirects', 'feed_http_error', 'feed_unreadable'] as const;
export type FeedErrorCode = (typeof FEED_ERROR_CODES)[number];

const isFeedCode = (code: unknown): code is FeedErrorCode => typeof code === 'string' && (FEED_ERROR_CODES as readonly string[]).includes(code);

/** The feed failure in `err`, or null when err is something else (a bug, a store failure). */
export function feedFailure(err: unknown): { code: FeedErrorCode; message: string } | null {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e || !isFeedCode(e.code)) return null;
  return { code: e.code, message: typeof e.message === 'string' && e.message !== '' ? e.message : e.code };
}

/** Feed failures become DomainErrors naming the member that carried the URL; others pass through. */
export function asFeedDomainError(err: unknown, path: string): unknown {
  if (err instanceof DomainError) return err;
  const f = feedFailure(err);
  if (!f) return err;
  return invalid(f.code, `the feed could not be read: ${f.message}`, [{ path, problem: f.code }]);
}

export const isFeedDomainError = (err: unknown): boolean => err instanceof DomainError && err.code === GrpcStatus.INVALID_ARGUMENT && isFeedCode(err.errorId);
