/**
 * The fields of a feed item as the newsletter needs them (domain/feed.ts reads the documents): plain text,
 * HTML (from the feed; feed-html.ts sanitizes it), absolute http(s) URLs, images out of enclosures and
 * Media RSS, dates in the formats feeds write. Pure.
 */

type Link = { href?: string; rel?: string; type?: string };

export const selfLink = (links: Link[] | undefined): string | undefined => links?.find((l) => l.rel === 'self')?.href;
/** Atom: rel="alternate" or no rel at all is the page the entry stands for; text/html preferred. */
export const alternateLink = (links: Link[] | undefined): string | undefined => {
  const alternates = (links ?? []).filter((l) => (l.rel ?? 'alternate') === 'alternate' && l.href);
  return (alternates.find((l) => !l.type || /html/i.test(l.type)) ?? alternates[0])?.href;
};

/** Plain text: whitespace runs (XML indentation, line breaks in titles) collapsed; empty is null. */
export function plain(value: string | undefined | null): string | null {
  if (typeof value !== 'string') return null;
  const s = value.replace(/\s+/g, ' ').trim();
  return s === '' ? null : s;
}

/** HTML as the feed gives it (feed-html.ts sanitizes it); only empty becomes null. */
export function html(value: string | undefined | null): string | null {
  if (typeof value !== 'string') return null;
  const s = value.trim();
  return s === '' ? null : s;
}

export const textAsHtml = (value: string | undefined | null): string | null => {
  const s = html(value);
  return s === null ? null : escapeHtml(s);
};

/** Atom text constructs: type="html" / "xhtml" are markup, "text" (the default) is escaped into HTML. */
export function atomHtml(value: { value?: string; type?: string } | undefined): string | null {
  if (!value) return null;
  const type = (value.type ?? 'text').toLowerCase();
  return type === 'html' || type === 'xhtml' || type.includes('html') ? html(value.value) : textAsHtml(value.value);
}

/** An Atom title as plain text: markup of an html / xhtml title is dropped and its entities decoded. */
export function atomPlain(value: { value?: string; type?: string } | undefined): string | null {
  if (!value) return null;
  const type = (value.type ?? 'text').toLowerCase();
  return plain(type.includes('html') ? decodeEntities(value.value?.replace(/<[^>]*>/g, '') ?? '') : value.value);
}

/** An absolute http(s) URL, or null: relative ones resolved against `base`, other schemes refused. */
export function absolute(value: string | undefined | null, base: string | null): string | null {
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

const IMAGE_EXTENSION = /\.(jpe?g|png|gif|webp|avif|svg)(\?|#|$)/i;
export const isImage = (type: string | undefined, url: string | undefined): boolean =>
  type ? /^image\//i.test(type) : typeof url === 'string' && IMAGE_EXTENSION.test(url);

/** An RSS enclosure that is an image (podcast audio is not). */
export const enclosureImage = (enclosures: Array<{ url?: string; type?: string }> | undefined): string | undefined =>
  enclosures?.find((e) => isImage(e.type, e.url))?.url;

type Media = {
  contents?: Array<{ url?: string; type?: string; medium?: string }>;
  thumbnails?: Array<{ url?: string }>;
  groups?: Array<{ contents?: Array<{ url?: string; type?: string; medium?: string }>; thumbnails?: Array<{ url?: string }> }>;
};
/** Media RSS: an image media:content (medium or type says so), else a thumbnail; groups after. */
export function mediaImage(media: Media | undefined): string | undefined {
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

export const image = (base: string | null, ...candidates: Array<string | undefined | null>): string | null => {
  for (const c of candidates) {
    const url = absolute(c, base);
    if (url) return url;
  }
  return null;
};

export function firstDate(...values: Array<string | undefined | null>): Date | null {
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

export const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };
export function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : m;
    }
    return NAMED[e.toLowerCase()] ?? m;
  });
}
