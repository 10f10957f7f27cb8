// Open and click tracking written into a rendered mail's HTML (the API contract "Opens and clicks"): every
// http(s) `<a href>` becomes a click link that names the original by its index, and a 1x1 pixel
// loads the open URL; marketing mail without an unsubscribe link gets its footer in the same pass.
// Pure: the caller passes the URLs (signed by app/public-links.ts).
//
// Why htmlparser2 and not regexes: customer HTML is arbitrary (attributes in any order and quoting,
// entities, `<a>` inside comments, <script> or <style>, duplicate attributes). htmlparser2 tokenizes it
// the way a browser does and gives each tag's exact source span, so only real `<a>` tags are rebuilt and
// every other byte of the mail stays as it was. It was already in the tree (html-to-text's parser).
import { Parser } from 'htmlparser2';

/**
 * Links rewritten per mail; later ones stay as they are (untracked). Bounds the message record's
 * `links` (a click token's index is at most 65535 anyway).
 */
export const MAX_TRACKED_LINKS = 1000;

export interface TrackingFlags { opens: boolean; clicks: boolean }

export interface TrackingUrls {
  /** The open pixel's URL. */
  openUrl: string;
  /** The click URL of the i-th rewritten link (0-based, in document order). */
  clickUrl(index: number): string;
  /** Links left untouched whatever they are: the mail's own unsubscribe and preference links. */
  keep?: ReadonlyArray<string | null | undefined>;
  /**
   * Markup added (before the open pixel) when no `<a href>` of the html goes to one of `keep`: the
   * unsubscribe footer of marketing mail that has no unsubscribe link of its own (unsubscribe-footer.ts).
   */
  footerUnlessKept?: string | null;
}

export interface InstrumentedHtml {
  html: string;
  /** The original URLs of the rewritten links, in order: a click token's index points into this list. */
  links: string[];
}

/** Escapes a value for a double-quoted attribute (and for text: `<`/`>` too, which costs nothing). */
export function escapeAttribute(value: string): string {
  return value.replace(/[&"<>]/g, (c) => ({ '&': '&amp;', '"': '&quot;', '<': '&lt;', '>': '&gt;' })[c]!);
}

// What a browser does with an href before parsing it: strip leading/trailing C0 controls and spaces,
// drop tabs and line breaks anywhere (so `java\tscript:` is javascript:, and `ht\ntp://` is http://).
function browserUrl(href: string): string {
  return href.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '').replace(/[\t\n\r]/g, '');
}

/** The URL to track, or null for anything that is not an absolute http(s) URL (mailto:, #, relative, javascript:). */
export function trackableUrl(href: string): string | null {
  const url = browserUrl(href);
  if (!/^https?:\/\//i.test(url)) return null;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? url : null;
  } catch {
    return null;
  }
}

// An attribute name a browser would read back as the same single name (htmlparser2 passes through
// names a browser treats as parse errors; rebuilding them could change the tag's meaning).
const SAFE_ATTRIBUTE_NAME = /^[^\s"'<>/=\u0000-\u001f]+$/;

function rebuildAnchor(attribs: Record<string, string>, href: string): string {
  let tag = '<a';
  for (const [name, value] of Object.entries(attribs)) {
    if (!SAFE_ATTRIBUTE_NAME.test(name)) continue;
    tag += ` ${name}="${escapeAttribute(name === 'href' ? href : value)}"`;
  }
  return `${tag}>`;
}

const pixel = (openUrl: string) =>
  `<img src="${escapeAttribute(openUrl)}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0" />`;

/**
 * Rewrites the links (flags.clicks) and adds the footer (when no link goes to a kept URL) and the open
 * pixel (flags.opens) before the first `</body>`, or at the end when there is none (before a tag left
 * unfinished at the very end). With nothing to do the html is returned unchanged.
 */
export function instrumentHtml(html: string, urls: TrackingUrls, flags: TrackingFlags): InstrumentedHtml {
  const links: string[] = [];
  if (!flags.opens && !flags.clicks && !urls.footerUnlessKept) return { html, links };
  const keep = new Set((urls.keep ?? []).filter((u): u is string => typeof u === 'string' && u.length > 0).map(browserUrl));
  let keptLink = false;
  // Source spans to replace, in document order: [start, end (exclusive), replacement].
  const edits: Array<[number, number, string]> = [];
  let bodyEnd = -1;
  // End (exclusive) of the last complete token: a tag cut off at the end of the document is dropped by
  // a browser, and a pixel appended after it would be swallowed with it, so the pixel goes before it.
  let lastEnd = 0;
  const seen = () => {
    lastEnd = Math.max(lastEnd, parser.endIndex + 1);
  };

  const parser: Parser = new Parser(
    {
      onopentag(name, attribs, isImplied) {
        if (!isImplied) seen();
        if (isImplied || name !== 'a' || !Object.prototype.hasOwnProperty.call(attribs, 'href')) return;
        const url = trackableUrl(attribs.href!);
        if (url !== null && keep.has(url)) keptLink = true;
        if (!flags.clicks || url === null || keep.has(url) || links.length >= MAX_TRACKED_LINKS) return;
        const index = links.length;
        links.push(url);
        edits.push([parser.startIndex, parser.endIndex + 1, rebuildAnchor(attribs, urls.clickUrl(index))]);
      },
      onclosetag(name, isImplied) {
        // Implied closes (at the end of the document) carry no source span of their own.
        if (isImplied) return;
        seen();
        if (name === 'body' && bodyEnd === -1) bodyEnd = parser.startIndex;
      },
      ontext: seen,
      oncommentend: seen,
      oncdataend: seen,
      onprocessinginstruction: seen,
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(html);

  const end = bodyEnd !== -1 ? bodyEnd : Math.min(lastEnd, html.length);
  if (urls.footerUnlessKept && !keptLink) edits.push([end, end, urls.footerUnlessKept]);
  if (flags.opens) edits.push([end, end, pixel(urls.openUrl)]);
  // Stable: at one position the footer stays before the pixel.
  edits.sort((a, b) => a[0] - b[0]);
  let out = '';
  let at = 0;
  for (const [start, end, replacement] of edits) {
    out += html.slice(at, start) + replacement;
    at = end;
  }
  return { html: out + html.slice(at), links };
}
