/**
 * Fetching a newsletter's feed (the API contract "RSS newsletters", polling): a conditional GET (ETag /
 * Last-Modified; 304 -> not_modified), 10 s for the whole fetch redirects included, 5 MB, at most 3
 * redirects, and every request through the outbound guard (@mailer/outbound; docs/architecture.md "Outbound
 * calls"). The guard never follows redirects: they are followed here, each Location resolved against
 * the URL that answered and sent through the guard again (scheme, credentials, literal address, DNS
 * and connected address re-checked), so a feed cannot redirect us into the cluster.
 *
 * Every failure is a FeedError whose message is fit for the newsletter's `lastError`: what went wrong
 * with the feed or its address, never an internal address, a stack or a secret.
 */
import { STATUS_CODES } from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { TIME_LIMITS } from '@mailer/kit';
import { OutboundError, type Outbound, type OutboundResponse } from '@mailer/outbound';
import { FeedError, parseFeed, type Feed } from '../domain/feed';

export interface FetchedFeed {
  kind: 'feed';
  feed: Feed;
  etag: string | null;
  lastModified: string | null;
  /** The URL the feed was read from, after redirects. */
  url: string;
}
export type FeedFetch = FetchedFeed | { kind: 'not_modified' };

export interface FeedLimits {
  /** The whole fetch, redirects included (the API contract: 10 s). */
  timeoutMs?: number;
  /** Bytes of feed, on the wire and decompressed (the API contract: 5 MB). */
  maxBytes?: number;
  /** Redirects followed (the API contract: 3). */
  maxRedirects?: number;
}

export interface FeedFetcher {
  fetch(url: string, conditional?: { etag?: string | null; lastModified?: string | null }): Promise<FeedFetch>;
}

/** The time limit is shared with the gateway, whose deadline for the calls that read a feed is derived from it. */
export const FEED_LIMITS = { timeoutMs: TIME_LIMITS.feedRead, maxBytes: 5 * 1024 * 1024, maxRedirects: 3 } as const;

export const FEED_USER_AGENT = 'mailer-rss/1.0 (feed reader of RSS newsletters)';
const ACCEPT = 'application/rss+xml, application/atom+xml, application/feed+json, application/rdf+xml;q=0.9, application/xml;q=0.9, text/xml;q=0.9, application/json;q=0.8, */*;q=0.5';
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** `outbound`: the service's guarded client (createOutbound(outboundSettingsOf(config))), shared, not closed here. */
export function createFeedFetcher(outbound: Pick<Outbound, 'request'>, limits: FeedLimits = {}): FeedFetcher {
  const timeoutMs = limits.timeoutMs ?? FEED_LIMITS.timeoutMs;
  const maxBytes = limits.maxBytes ?? FEED_LIMITS.maxBytes;
  const maxRedirects = limits.maxRedirects ?? FEED_LIMITS.maxRedirects;

  return {
    async fetch(url, conditional = {}) {
      const headers: Record<string, string> = { 'user-agent': FEED_USER_AGENT, accept: ACCEPT, 'accept-encoding': 'gzip, deflate, br' };
      if (conditional.etag) headers['if-none-match'] = conditional.etag;
      if (conditional.lastModified) headers['if-modified-since'] = conditional.lastModified;
      const isConditional = 'if-none-match' in headers || 'if-modified-since' in headers;

      const deadline = Date.now() + timeoutMs;
      let current = url;
      for (let redirects = 0; ; redirects++) {
        const remaining = deadline - Date.now();
        if (remaining <= 0) throw timedOut(timeoutMs);
        let res: OutboundResponse;
        try {
          res = await outbound.request(current, { method: 'GET', headers, timeoutMs: remaining, maxResponseBytes: maxBytes, onTooLarge: 'fail' });
        } catch (err) {
          throw fromOutbound(err, redirects > 0, timeoutMs, maxBytes);
        }

        if (REDIRECTS.has(res.status)) {
          const location = single(res.headers.location);
          if (!location) throw new FeedError('feed_http_error', `the feed answered HTTP ${res.status} (a redirect) without a Location to follow`);
          if (redirects >= maxRedirects) throw new FeedError('feed_too_many_redirects', `the feed redirected more than ${maxRedirects} times`);
          try {
            current = new URL(location, current).href; // a relative Location is relative to the URL that answered
          } catch {
            throw new FeedError('feed_http_error', `the feed answered HTTP ${res.status} with a Location that is not a URL`);
          }
          continue;
        }
        if (res.status === 304) {
          if (isConditional) return { kind: 'not_modified' };
          throw new FeedError('feed_http_error', 'the feed answered HTTP 304 (Not Modified) to a request that was not conditional');
        }
        if (res.status < 200 || res.status > 299) throw new FeedError('feed_http_error', `the feed answered HTTP ${res.status}${STATUS_CODES[res.status] ? ` (${STATUS_CODES[res.status]})` : ''}`);

        const contentType = single(res.headers['content-type']) ?? null;
        const body = decode(decompress(res.body, single(res.headers['content-encoding']), maxBytes), contentType);
        const feed = parseFeed(body, contentType, current);
        return { kind: 'feed', feed, etag: single(res.headers.etag) ?? null, lastModified: single(res.headers['last-modified']) ?? null, url: current };
      }
    },
  };
}

const single = (value: string | string[] | undefined): string | undefined => {
  const v = Array.isArray(value) ? value[0] : value;
  return v === undefined || v.trim() === '' ? undefined : v.trim();
};

const megabytes = (bytes: number) => (bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MB` : `${bytes} bytes`);
const seconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);
const timedOut = (timeoutMs: number) => new FeedError('feed_timeout', `the feed did not answer completely within ${seconds(timeoutMs)}`);
const tooLarge = (maxBytes: number) => new FeedError('feed_too_large', `the feed is larger than ${megabytes(maxBytes)}`);

/** The guard's failures as feed failures; the guard's own messages are already customer-safe. */
function fromOutbound(err: unknown, redirected: boolean, timeoutMs: number, maxBytes: number): FeedError {
  if (!(err instanceof OutboundError)) return new FeedError('feed_unreachable', 'the feed could not be fetched');
  const where = redirected ? 'the feed redirected to a URL that is not allowed' : 'the feed URL is not allowed';
  switch (err.code) {
    case 'url_not_allowed':
    case 'address_not_allowed':
      return new FeedError('feed_not_allowed', `${where}: ${err.message}`);
    case 'timeout':
      return timedOut(timeoutMs);
    case 'response_too_large':
      return tooLarge(maxBytes);
    case 'dns_failed':
      return new FeedError('feed_unreachable', "the feed's host name could not be resolved");
    case 'tls_failed':
      return new FeedError('feed_unreachable', "the TLS handshake with the feed's server failed (certificate or protocol)");
    case 'connection_failed':
      // "the target refused the connection", "the connection was closed before a complete answer", ...
      return new FeedError('feed_unreachable', err.message.replace(/the target/g, "the feed's server"));
  }
}

/** Content-Encoding the server applied (asked for: feeds are text and compress well); the limit holds decompressed. */
function decompress(body: Buffer, encoding: string | undefined, maxBytes: number): Buffer {
  const enc = (encoding ?? 'identity').toLowerCase();
  if (enc === 'identity') return body;
  const inflate = enc === 'gzip' || enc === 'x-gzip' ? gunzipSync : enc === 'deflate' ? inflateSync : enc === 'br' ? brotliDecompressSync : null;
  if (!inflate) throw new FeedError('feed_unreadable', `the feed is sent with an unsupported Content-Encoding (${enc.slice(0, 40)})`);
  try {
    return inflate(body, { maxOutputLength: maxBytes });
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) throw tooLarge(maxBytes);
    throw new FeedError('feed_unreadable', `the feed's ${enc} compression is corrupt`);
  }
}

/** Bytes to text: the charset of Content-Type, else a BOM, else the XML declaration's encoding, else UTF-8. */
function decode(body: Buffer, contentType: string | null): string {
  const declared = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType ?? '')?.[1];
  let label = declared;
  if (!label) {
    if (body[0] === 0xff && body[1] === 0xfe) label = 'utf-16le';
    else if (body[0] === 0xfe && body[1] === 0xff) label = 'utf-16be';
    else if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) label = 'utf-8';
    else label = /^\s*<\?xml[^>]*\bencoding\s*=\s*["']([\w.:-]+)["']/i.exec(body.subarray(0, 256).toString('latin1'))?.[1];
  }
  try {
    return new TextDecoder(label ?? 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body); // an unknown charset label: UTF-8 is the best guess
  }
}
