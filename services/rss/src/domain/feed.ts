/**
 * Reading a feed: RSS 0.9x/2.0, Atom, RDF (RSS 1.0) and JSON Feed, parsed by feedsmith (DESIGN.md library
 * pick), turned into one shape the newsletter code uses, and the identity rules of API.md "RSS newsletters":
 * an item is its guid, else its link, else a hash of its title and date; an item whose guid changed but
 * whose link was seen before is not new (feeds that regenerate guids must not mail their back catalogue).
 *
 * `summary` and `content` are HTML fragments as the feed gives them: customer / third-party HTML, never
 * trusted (the issue template escapes them or passes them through the sanitizer). Fields a feed declares
 * as plain text (Atom type="text", JSON Feed content_text) are escaped into HTML so both fields are
 * always HTML. `title` and `author` are plain text. Links and image URLs are absolute http(s) URLs,
 * resolved against the feed's URL; anything else (javascript:, data:, unresolvable) becomes null so no
 * such URL ever reaches a mail. Pure: no I/O, no clock.
 */
import { createHash } from 'node:crypto';
import { XMLValidator } from 'fast-xml-parser';
import { parseFeed as parseAnyFeed, parseJsonFeed, type AtomFeed, type JsonFeed, type RdfFeed, type RssFeed } from 'feedsmith';
import { FeedError } from './feed-error';

export { FeedError, type FeedErrorCode } from './feed-error';

export interface FeedItem {
  /** Identity (itemKey): what the newsletter stores as seen. */
  key: string;
  guid: string | null;
  title: string | null;
  link: string | null;
  publishedAt: Date | null;
  /** HTML (customer / third-party: untrusted). */
  summary: string | null;
  /** HTML (customer / third-party: untrusted). */
  content: string | null;
  author: string | null;
  imageUrl: string | null;
}

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
  if (HTML_PAGE.test(text)) throw unreadable('the address serves an HTML page, not a feed (a page usually links its feed as application/rss+xml or application/atom+xml)');
  return fromXml(text, baseUrl ?? null);
}

/** guid, else link, else a hash of title and date (API.md); long values are hashed to bound what is stored. */
export function itemKey(item: Pick<FeedItem, 'guid' | 'link' | 'title' | 'publishedAt'>): string {
  const value = item.guid ?? item.link;
  if (value !== null && value !== undefined) return value.length > MAX_KEY_LENGTH ? `sha256:${sha256(value)}` : value;
  return `sha256:${sha256(`${item.title ?? ''}\n${item.publishedAt ? item.publishedAt.toISOString() : ''}`)}`;
}

/**
 * Items not seen before, in the order given (newest first from parseFeed), each key once: an item is
 * seen when its key is, or when its link is (its guid changed but its link did not, API.md).
 */
export function unseenItems(items: FeedItem[], seen: { keys: ReadonlySet<string>; links: ReadonlySet<string> }): FeedItem[] {
  const taken = new Set<string>();
  const takenLinks = new Set<string>();
  const out: FeedItem[] = [];
  for (const item of items) {
    if (seen.keys.has(item.key) || taken.has(item.key)) continue;
    if (item.link !== null && (seen.links.has(item.link) || takenLinks.has(item.link))) continue;
    taken.add(item.key);
    if (item.link !== null) takenLinks.add(item.link);
    out.push(item);
  }
  return out;
}

// ---- documents ---------------------------------------------------------------------------------

const HTML_PAGE = /^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<(!doctype\s+html|html[\s>])/i;

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

type Draft = Omit<FeedItem, 'key'>;

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
    .map((d): FeedItem => {
      // Relative URLs in the HTML would be dead in a mail: resolved against the item's page (where the
      // HTML was written for), else the feed.
      const htmlBase = d.link ?? base;
      return { key: itemKey(d), ...d, summary: absoluteUrlsIn(d.summary, htmlBase), content: absoluteUrlsIn(d.content, htmlBase) };
    });
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

// ---- fields ------------------------------------------------------------------------------------

type Link = { href?: string; rel?: string; type?: string };

const selfLink = (links: Link[] | undefined): string | undefined => links?.find((l) => l.rel === 'self')?.href;
/** Atom: rel="alternate" or no rel at all is the page the entry stands for; text/html preferred. */
const alternateLink = (links: Link[] | undefined): string | undefined => {
  const alternates = (links ?? []).filter((l) => (l.rel ?? 'alternate') === 'alternate' && l.href);
  return (alternates.find((l) => !l.type || /html/i.test(l.type)) ?? alternates[0])?.href;
};

/** Plain text: whitespace runs (XML indentation, line breaks in titles) collapsed; empty is null. */
function plain(value: string | undefined | null): string | null {
  if (typeof value !== 'string') return null;
  const s = value.replace(/\s+/g, ' ').trim();
  return s === '' ? null : s;
}

/** HTML kept as given (customer / third-party HTML); only empty becomes null. */
function html(value: string | undefined | null): string | null {
  if (typeof value !== 'string') return null;
  const s = value.trim();
  return s === '' ? null : s;
}

const textAsHtml = (value: string | undefined | null): string | null => {
  const s = html(value);
  return s === null ? null : escapeHtml(s);
};

/** Atom text constructs: type="html" / "xhtml" are markup, "text" (the default) is escaped into HTML. */
function atomHtml(value: { value?: string; type?: string } | undefined): string | null {
  if (!value) return null;
  const type = (value.type ?? 'text').toLowerCase();
  return type === 'html' || type === 'xhtml' || type.includes('html') ? html(value.value) : textAsHtml(value.value);
}

/** An Atom title as plain text: markup of an html / xhtml title is dropped and its entities decoded. */
function atomPlain(value: { value?: string; type?: string } | undefined): string | null {
  if (!value) return null;
  const type = (value.type ?? 'text').toLowerCase();
  return plain(type.includes('html') ? decodeEntities(value.value?.replace(/<[^>]*>/g, '') ?? '') : value.value);
}

/** An absolute http(s) URL, or null: relative ones resolved against `base`, other schemes refused. */
function absolute(value: string | undefined | null, base: string | null): string | null {
  if (typeof value !== 'string') return null;
  const raw = value.trim();
  if (raw === '') return null;
  try {
    const url = base ? new URL(raw, base) : new URL(raw);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch {
    return null;
  }
}

const URL_ATTRIBUTE = /(<[a-z][^>]*?\s(?:href|src|poster)\s*=\s*)(?:"([^"]*)"|'([^']*)')/gi;
/**
 * `href`, `src` and `poster` attributes with a relative URL made absolute; everything else is left as the
 * feed wrote it (URLs with a scheme, fragments: what they point to is the sanitizer's business).
 */
function absoluteUrlsIn(markup: string | null, base: string | null): string | null {
  if (markup === null || base === null) return markup;
  return markup.replace(URL_ATTRIBUTE, (whole, head: string, dq: string | undefined, sq: string | undefined) => {
    const value = (dq ?? sq ?? '').trim();
    if (value === '' || value.startsWith('#') || /^[a-z][a-z0-9+.-]*:/i.test(value)) return whole;
    let resolved: string;
    try {
      resolved = new URL(decodeEntities(value), base).href;
    } catch {
      return whole;
    }
    const quote = dq !== undefined ? '"' : "'";
    return `${head}${quote}${resolved.replace(/&/g, '&amp;').replace(quote === '"' ? /"/g : /'/g, quote === '"' ? '&quot;' : '&#39;')}${quote}`;
  });
}

const IMAGE_EXTENSION = /\.(jpe?g|png|gif|webp|avif|svg)(\?|#|$)/i;
const isImage = (type: string | undefined, url: string | undefined): boolean =>
  type ? /^image\//i.test(type) : typeof url === 'string' && IMAGE_EXTENSION.test(url);

/** An RSS enclosure that is an image (podcast audio is not). */
const enclosureImage = (enclosures: Array<{ url?: string; type?: string }> | undefined): string | undefined =>
  enclosures?.find((e) => isImage(e.type, e.url))?.url;

type Media = {
  contents?: Array<{ url?: string; type?: string; medium?: string }>;
  thumbnails?: Array<{ url?: string }>;
  groups?: Array<{ contents?: Array<{ url?: string; type?: string; medium?: string }>; thumbnails?: Array<{ url?: string }> }>;
};
/** Media RSS: an image media:content (medium or type says so), else a thumbnail; groups after. */
function mediaImage(media: Media | undefined): string | undefined {
  if (!media) return undefined;
  const scopes = [media, ...(media.groups ?? [])];
  for (const scope of scopes) {
    const content = scope.contents?.find((c) => c.url && (c.medium ? c.medium === 'image' : isImage(c.type, c.url)));
    if (content?.url) return content.url;
  }
  for (const scope of scopes) {
    const thumb = scope.thumbnails?.find((t) => t.url);
    if (thumb?.url) return thumb.url;
  }
  return undefined;
}

const image = (base: string | null, ...candidates: Array<string | undefined | null>): string | null => {
  for (const c of candidates) {
    const url = absolute(c, base);
    if (url) return url;
  }
  return null;
};

function firstDate(...values: Array<string | undefined | null>): Date | null {
  for (const v of values) {
    const d = typeof v === 'string' ? parseDate(v) : null;
    if (d) return d;
  }
  return null;
}

// Zone names RFC 822 allows that V8's Date.parse also reads: UT, GMT, Z, EST/EDT, CST/CDT, MST/MDT,
// PST/PDT. Feeds also write a few it does not; those are mapped to their offsets.
const ZONES: Record<string, string> = {
  UTC: '+0000', CET: '+0100', CEST: '+0200', MET: '+0100', MEST: '+0200', EET: '+0200', EEST: '+0300', WET: '+0000', WEST: '+0100',
  BST: '+0100', IST: '+0530', JST: '+0900', KST: '+0900', AEST: '+1000', AEDT: '+1100', NZST: '+1200', NZDT: '+1300',
  AKST: '-0900', AKDT: '-0800', HST: '-1000',
};

/** RFC 822 / 2822 (RSS pubDate), RFC 3339 / ISO 8601 (Atom, dc:date, JSON Feed); null when unreadable. */
export function parseDate(raw: string): Date | null {
  let s = raw.trim();
  if (s === '') return null;
  let t = Date.parse(s);
  if (Number.isNaN(t)) {
    // "Tue, 24 Nov 2026 10:00:00 CEST", "24 Nov 2026 10:00 +0100 (CET)", a missing or doubled day name.
    s = s.replace(/\([^)]*\)\s*$/, '').replace(/\b([A-Z]{2,5})\s*$/, (m, zone: string) => ZONES[zone] ?? m);
    s = s.replace(/^[A-Za-z]+,?\s+(?=\d)/, '');
    t = Date.parse(s);
  }
  if (Number.isNaN(t)) return null;
  const d = new Date(t);
  // Two-digit RFC 822 years: V8 reads "24 Nov 26" as 2026, but "99" as 1999: both as a reader would.
  return d.getUTCFullYear() < 1970 || d.getUTCFullYear() > 9999 ? null : d;
}

// ---- helpers -----------------------------------------------------------------------------------

const unreadable = (message: string) => new FeedError('feed_unreadable', message);
const clip = (s: string) => (s.length > MESSAGE_MAX ? `${s.slice(0, MESSAGE_MAX)}…` : s);
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };
function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : m;
    }
    return NAMED[e.toLowerCase()] ?? m;
  });
}
