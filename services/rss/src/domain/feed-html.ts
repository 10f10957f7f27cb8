/**
 * The HTML of a feed item (`summary`, `content`) is a third party's: it reaches readers in mail signed
 * for the customer, so it is cleaned once, when the feed is read, with sanitize-html and an allowlist
 * (and again when an issue's mail values are built, for items stored before this rule). What is left:
 *
 * - text and the structural / inline tags of an article (sanitize-html's defaults: headings,
 *   paragraphs, lists, tables, quotes, emphasis, code, figures...) plus `<img>`;
 * - attributes: a `href` and `title`; img `src`, `alt`, `title`, `width`, `height`, `align`; table
 *   cells' spans and alignment; `ol start`, `li value`, `time datetime`, `abbr title`. No `style`,
 *   no `class`, no `id`, no event handler;
 * - URLs: absolute http(s) only, relative ones resolved against `base` (the item's page, else the
 *   feed): a mail has no base URL. Any other scheme (javascript:, data:, mailto:, ...) or an
 *   unresolvable URL removes the attribute (a link keeps its text; an image goes);
 * - gone with everything inside them: script, style, noscript, template, form and its controls,
 *   iframe, object, embed, svg, math (a phishing form's labels do not survive as text either);
 * - tracking pixels: an image whose width or height is at most 1 pixel (attribute or inline style),
 *   or which is hidden by its inline style (display:none, visibility:hidden, opacity:0), is removed.
 *   Feeds add them for their own statistics (WordPress stats, FeedBurner); a visible image is kept
 *   whatever its host, as readers expect an article's pictures.
 *
 * Pure; the result is HTML that may be printed as is (templates print it as markup).
 */
import sanitizeHtml from 'sanitize-html';
import { absolute } from './feed-fields';

const DROPPED_WITH_CONTENT = ['script', 'style', 'noscript', 'template', 'textarea', 'option', 'select', 'button', 'form', 'iframe', 'object', 'embed', 'svg', 'math', 'title', 'head'];

const ALLOWED_ATTRIBUTES: Record<string, string[]> = {
  a: ['href', 'title'],
  img: ['src', 'alt', 'title', 'width', 'height', 'align'],
  td: ['colspan', 'rowspan', 'align', 'valign'],
  th: ['colspan', 'rowspan', 'align', 'valign', 'scope'],
  ol: ['start', 'type'],
  li: ['value'],
  time: ['datetime'],
  abbr: ['title'],
};

/** A dimension of at most one pixel (`1`, `0`, `1px`, `0.5px`); other units are not pixels. */
const atMostOnePixel = (value: string | undefined): boolean => {
  const m = value === undefined ? null : /^\s*(\d*\.?\d+)\s*(px)?\s*$/i.exec(value);
  return m !== null && Number(m[1]) <= 1;
};

/** Inline CSS that makes an image a pixel or hides it. */
function hiddenByStyle(style: string | undefined): boolean {
  for (const declaration of (style ?? '').split(';')) {
    const colon = declaration.indexOf(':');
    if (colon < 0) continue;
    const property = declaration.slice(0, colon).trim().toLowerCase();
    const value = declaration.slice(colon + 1).replace(/!important/i, '').trim().toLowerCase();
    if ((property === 'width' || property === 'height' || property === 'max-width' || property === 'max-height') && atMostOnePixel(value)) return true;
    if ((property === 'display' && value === 'none') || (property === 'visibility' && value === 'hidden') || (property === 'opacity' && Number(value) === 0)) return true;
  }
  return false;
}

const isTrackingPixel = (attribs: Record<string, string>): boolean =>
  atMostOnePixel(attribs.width) || atMostOnePixel(attribs.height) || hiddenByStyle(attribs.style);

function optionsFor(base: string | null): sanitizeHtml.IOptions {
  /** The attribute as an absolute http(s) URL, or without it (the others in their order). */
  const withUrl = (attribs: Record<string, string>, name: string) => {
    const out: Record<string, string> = {};
    for (const [key, value] of Object.entries(attribs)) {
      if (key !== name) out[key] = value;
      else {
        const url = absolute(value, base);
        if (url) out[key] = url;
      }
    }
    return out;
  };
  return {
    allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img'],
    allowedAttributes: ALLOWED_ATTRIBUTES,
    allowedSchemes: ['http', 'https'],
    allowedSchemesByTag: {},
    allowProtocolRelative: false,
    disallowedTagsMode: 'discard',
    nonTextTags: DROPPED_WITH_CONTENT,
    transformTags: {
      a: (tagName, attribs) => ({ tagName, attribs: withUrl(attribs, 'href') }),
      // A pixel loses its src here (the style that may make it one is not an allowed attribute, so
      // the filter below would no longer see it); an image without src is removed.
      img: (tagName, attribs) => ({ tagName, attribs: isTrackingPixel(attribs) ? {} : withUrl(attribs, 'src') }),
    },
    exclusiveFilter: (frame) => frame.tag === 'img' && !frame.attribs.src,
  };
}

/** The item HTML cleaned as above; empty (or nothing left) is null. */
export function sanitizeFeedHtml(markup: string | null, base: string | null): string | null {
  if (markup === null) return null;
  const clean = sanitizeHtml(markup, optionsFor(base)).trim();
  return clean === '' ? null : clean;
}
