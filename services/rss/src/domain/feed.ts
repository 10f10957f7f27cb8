/**
 * Reading a feed: RSS 0.9x/2.0, Atom, RDF (RSS 1.0) and JSON Feed, parsed by feedsmith (docs/architecture.md library
 * pick), turned into one shape the newsletter code uses, and the identity rules of the API contract "RSS newsletters":
 * an item is its guid, else its link, else a hash of its title and date; an item whose guid changed but
 * whose link was seen before is not new (feeds that regenerate guids must not mail their back catalogue).
 *
 * `summary` and `content` are HTML fragments: third-party HTML, kept here as the feed wrote it
 * (`untrustedHtml`) and cleaned by `sanitizeItemHtml` (the allowlist sanitizer of feed-html.ts: no
 * script, style, form, iframe, object, event handler or tracking pixel; absolute http(s) URLs only,
 * relative ones resolved against the item's page, as a mail has no base URL) for the items that are
 * kept or shown: sanitizing costs several times the rest of the parse, and a poll keeps only the
 * items it has not seen before. Fields a feed declares as plain text (Atom type="text", JSON Feed
 * content_text) are escaped into HTML first. `title` and `author` are plain text. Links and image URLs are
 * absolute http(s) URLs, resolved against the feed's URL; anything else (javascript:, data:,
 * unresolvable) becomes null so no such URL reaches a mail through them. Pure: no I/O, no clock.
 */
import { createHash } from 'node:crypto';
import { XMLValidator } from 'fast-xml-parser';
import { parseFeed as parseAnyFeed, parseJsonFeed, type AtomFeed, type JsonFeed, type RdfFeed, type RssFeed } from 'feedsmith';
import { absolute, alternateLink, atomHtml, atomPlain, decodeEntities, enclosureImage, firstDate, html, image, isImage, mediaImage, plain, selfLink, textAsHtml } from './feed-fields';
import { FeedError } from './feed-error';
import { sanitizeFeedHtml } from './feed-html';

export { FeedError, type FeedErrorCode } from './feed-error';
export { parseDate } from './feed-fields';

export interface FeedItem {
  /** Identity (itemKey): what the newsletter stores as seen. */
  key: string;
  guid: string | null;
  title: string | null;
  link: string | null;
  publishedAt: Date | null;
  author: string | null;
  imageUrl: string | null;
  /** `summary` and `content` as the feed wrote them: never stored, shown or mailed before sanitizeItemHtml. */
  untrustedHtml: ItemHtml;
}

/** An item's HTML fragments, and the URL their relative links resolve against (the item's page, else the feed). */
export interface ItemHtml {
  summary: string | null;
  content: string | null;
  base: string | null;
}

/** An item's `summary` and `content` sanitized (feed-html.ts); empty ones are null. */
export const sanitizeItemHtml = ({ summary, content, base }: ItemHtml): { summary: string | null; content: string | null } => ({
  summary: sanitizeFeedHtml(summary, base),
  content: sanitizeFeedHtml(content, base),
});

export interface Feed {
  title: string | null;
  siteUrl: string | null;
  feedUrl: string | null;
  /** Newest first (undated items last, in the feed's order). */
  items: FeedItem[];
}

/** A key longer than this is stored as its hash: guids and links are the feed's, of any length. */
const MAX_KEY_LENGTH = 512;
const MESSAGE_MAX = 200;

/**
 * Parses a feed document. `contentType` is the response's Content-Type (a hint: many feeds are served
 * as text/html or text/plain, so the body decides); `baseUrl` is the URL the feed was read from, which
 * relative links are resolved against. Throws FeedError('feed_unreadable') saying what is wrong.
 */
export function parseFeed(body: string, contentType: string | null, baseUrl?: string | null): Feed {
  const text = body.replace(/^\uFEFF/, '').trim();
  if (text === '') throw unreadable('the feed is empty');
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (text.startsWith('{') || (/json/.test(type) && !text.startsWith('<'))) return fromJson(text, baseUrl ?? null);
  if (!text.startsWith('<')) throw unreadable(`the document is not a feed (${type || 'no content type'}, neither XML nor JSON)`);
  if (HTML_PAGE.test(text)) {
    const advertised = advertisedFeed(text, baseUrl ?? null);
    throw unreadable(advertised ? `the address serves an HTML page, not a feed; the page names its feed: ${clip(advertised)}` : 'the address serves an HTML page, not a feed');
  }
  return fromXml(text, baseUrl ?? null);
}

/** guid, else link, else a hash of title and date (the API contract); long values are hashed to bound what is stored. */
export function itemKey(item: Pick<FeedItem, 'guid' | 'link' | 'title' | 'publishedAt'>): string {
  const value = item.guid ?? item.link;
  if (value !== null && value !== undefined) return value.length > MAX_KEY_LENGTH ? `sha256:${sha256(value)}` : value;
  return `sha256:${sha256(`${item.title ?? ''}\n${item.publishedAt ? item.publishedAt.toISOString() : ''}`)}`;
}

/**
 * Items not seen before, in the order given (newest first from parseFeed), each key once. An item is
 * seen when its key is, or when its guid changed but its link was seen (the API contract). "Its guid changed"
 * means the seen link is no longer carried by an item whose key was seen: when the feed still lists a
 * seen item with that link, the link is shared (feeds whose items all point to one landing page) and an
 * item with a new guid next to it is a new item, not a renamed one.
 */
export function unseenItems(items: FeedItem[], seen: { keys: ReadonlySet<string>; links: ReadonlySet<string> }): FeedItem[] {
  const linksOfSeenItems = new Set(items.filter((i) => i.link !== null && seen.keys.has(i.key)).map((i) => i.link));
  const taken = new Set<string>();
  const out: FeedItem[] = [];
  for (const item of items) {
    if (seen.keys.has(item.key) || taken.has(item.key)) continue;
    if (item.link !== null && seen.links.has(item.link) && !linksOfSeenItems.has(item.link)) continue; // guid changed
    taken.add(item.key);
    out.push(item);
  }
  return out;
}

// ---- documents ---------------------------------------------------------------------------------

const HTML_PAGE = /^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<(!doctype\s+html|html[\s>])/i;

/** Feed autodiscovery: the first <link rel="alternate" type="application/rss+xml|atom+xml|feed+json" href>. */
function advertisedFeed(page: string, base: string | null): string | null {
  for (const [tag] of page.slice(0, 256 * 1024).matchAll(/<link\b[^>]*>/gi)) {
    const attr = (name: string) => new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i').exec(tag)?.slice(1).find((v) => v !== undefined);
    if (!/(^|\s)alternate(\s|$)/i.test(attr('rel') ?? '')) continue;
    if (!/^application\/(rss\+xml|atom\+xml|feed\+json|rdf\+xml)$/i.test((attr('type') ?? '').trim())) continue;
    const url = absolute(decodeEntities(attr('href') ?? ''), base);
    if (url) return url;
  }
  return null;
}

function fromXml(text: string, baseUrl: string | null): Feed {
  // fast-xml-parser (under feedsmith) reads broken XML leniently, e.g. a truncated document as the
  // items before the cut: a feed must be well-formed XML, so it is validated first. Entities are never
  // expanded from a DTD (no entity-expansion bombs): feedsmith decodes the predefined and HTML ones only.
  const valid = XMLValidator.validate(text);
  if (valid !== true) {
    const { msg, line, col } = valid.err;
    throw unreadable(`the feed is not well-formed XML: ${clip(msg)} (line ${line}, column ${col})`);
  }
  let parsed: ReturnType<typeof parseAnyFeed<string>>;
  try {
    parsed = parseAnyFeed<string>(text);
  } catch (err) {
    const name = (err as Error).name;
    if (name === 'DetectError') throw unreadable('the document is XML but not an RSS, Atom or RDF feed');
    throw unreadable('the feed could not be read: its structure is not RSS, Atom or RDF');
  }
  switch (parsed.format) {
    case 'rss':
      return fromRss(parsed.feed, baseUrl);
    case 'atom':
      return fromAtom(parsed.feed, baseUrl);
    case 'rdf':
      return fromRdf(parsed.feed, baseUrl);
    case 'json':
      return fromJsonFeed(parsed.feed, baseUrl);
  }
}

function fromJson(text: string, baseUrl: string | null): Feed {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw unreadable(`the feed is not valid JSON: ${clip((err as Error).message)}`);
  }
  let feed: JsonFeed.Feed<string>;
  try {
    feed = parseJsonFeed<string>(value);
  } catch {
    throw unreadable('the document is JSON but not a JSON Feed (https://jsonfeed.org: version, title, items)');
  }
  return fromJsonFeed(feed, baseUrl);
}

// ---- formats -----------------------------------------------------------------------------------

type Draft = Omit<FeedItem, 'key' | 'untrustedHtml'> & { summary: string | null; content: string | null };

function fromRss(feed: RssFeed.Feed<string>, baseUrl: string | null): Feed {
  const feedUrl = absolute(selfLink(feed.atom?.links), baseUrl);
  const base = baseUrl ?? feedUrl;
  return finish(feed.title, absolute(feed.link, base), feedUrl, base, (feed.items ?? []).map((item): Draft => {
    const guid = plain(item.guid?.value);
    // RSS: a guid is a permalink unless isPermaLink="false"; it stands in for a missing link.
    const guidLink = guid !== null && item.guid?.isPermaLink !== false ? guid : undefined;
    return {
      guid,
      title: plain(item.title),
      link: absolute(item.link ?? alternateLink(item.atom?.links) ?? guidLink, base),
      publishedAt: firstDate(item.pubDate, ...(item.dc?.dates ?? []), item.atom?.published, item.atom?.updated),
      summary: html(item.description),
      content: html(item.content?.encoded),
      author: plain(item.dc?.creators?.[0]) ?? plain(item.authors?.[0]?.name) ?? plain(item.authors?.[0]?.email),
      imageUrl: image(base, enclosureImage(item.enclosures), mediaImage(item.media)),
    };
  }));
}

function fromAtom(feed: AtomFeed.Feed<string>, baseUrl: string | null): Feed {
  const feedUrl = absolute(selfLink(feed.links), baseUrl);
  const base = baseUrl ?? feedUrl;
  return finish(atomPlain(feed.title), absolute(alternateLink(feed.links), base), feedUrl, base, (feed.entries ?? []).map((entry): Draft => ({
    guid: plain(entry.id),
    title: atomPlain(entry.title),
    link: absolute(alternateLink(entry.links), base),
    publishedAt: firstDate(entry.published, entry.updated, ...(entry.dc?.dates ?? [])),
    summary: atomHtml(entry.summary),
    content: atomHtml(entry.content),
    author: plain(entry.authors?.[0]?.name) ?? plain(entry.dc?.creators?.[0]),
    imageUrl: image(base, mediaImage(entry.media), entry.links?.find((l) => l.rel === 'enclosure' && isImage(l.type, l.href))?.href),
  })));
}

function fromRdf(feed: RdfFeed.Feed<string>, baseUrl: string | null): Feed {
  // RSS 1.0: the channel's rdf:about is the feed's own URL, an item's rdf:about its identifier.
  const feedUrl = absolute(feed.rdf?.about ?? selfLink(feed.atom?.links), baseUrl);
  const base = baseUrl ?? feedUrl;
  return finish(feed.title, absolute(feed.link, base), feedUrl, base, (feed.items ?? []).map((item): Draft => ({
    guid: plain(item.rdf?.about),
    title: plain(item.title),
    link: absolute(item.link, base),
    publishedAt: firstDate(...(item.dc?.dates ?? []), ...(item.dcterms?.issued ?? []), item.atom?.published, item.atom?.updated),
    summary: html(item.description),
    content: html(item.content?.encoded),
    author: plain(item.dc?.creators?.[0]),
    imageUrl: image(base, mediaImage(item.media)),
  })));
}

function fromJsonFeed(feed: JsonFeed.Feed<string>, baseUrl: string | null): Feed {
  const feedUrl = absolute(feed.feed_url, baseUrl);
  const base = baseUrl ?? feedUrl;
  return finish(feed.title, absolute(feed.home_page_url, base), feedUrl, base, (feed.items ?? []).map((item): Draft => ({
    guid: plain(item.id === undefined || item.id === null ? undefined : String(item.id)),
    title: plain(item.title),
    link: absolute(item.url ?? item.external_url, base),
    publishedAt: firstDate(item.date_published, item.date_modified),
    summary: html(item.summary),
    content: html(item.content_html) ?? textAsHtml(item.content_text),
    author: plain(item.authors?.[0]?.name) ?? plain(feed.authors?.[0]?.name),
    imageUrl: image(base, item.image, item.banner_image, item.attachments?.find((a) => isImage(a.mime_type, a.url))?.url),
  })));
}

function finish(title: string | undefined | null, siteUrl: string | null, feedUrl: string | null, base: string | null, drafts: Draft[]): Feed {
  const items = drafts
    // An item with nothing to identify or show is no item (it would collide with every other such one).
    .filter((d) => d.guid !== null || d.link !== null || d.title !== null || d.summary !== null || d.content !== null)
    // Relative URLs in the HTML are resolved against the item's page (where the HTML was written for), else the feed.
    .map(({ summary, content, ...d }): FeedItem => ({ key: itemKey(d), ...d, untrustedHtml: { summary, content, base: d.link ?? base } }));
  return { title: plain(title ?? undefined), siteUrl, feedUrl, items: newestFirst(items) };
}

/** Dated items newest first; undated ones after them in the feed's own order (stable sort). */
function newestFirst(items: FeedItem[]): FeedItem[] {
  const time = (i: FeedItem) => (i.publishedAt ? i.publishedAt.getTime() : Number.NEGATIVE_INFINITY);
  return items
    .map((item, index) => ({ item, index }))
    .sort((a, b) => time(b.item) - time(a.item) || a.index - b.index)
    .map((x) => x.item);
}

// ---- helpers -----------------------------------------------------------------------------------

const unreadable = (message: string) => new FeedError('feed_unreadable', message);
const clip = (s: string) => (s.length > MESSAGE_MAX ? `${s.slice(0, MESSAGE_MAX)}…` : s);
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
