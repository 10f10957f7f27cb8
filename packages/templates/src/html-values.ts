// Trusted HTML in render values. A feed item's `summary` and `content` are HTML, cleaned by the rss
// service's sanitizer when the feed is read: escaping them, as every other value is escaped in the
// html part, would show their tags to the reader (in the html and in the text derived from it). So
// the producer marks them, `htmlValue(cleanHtml)`, which travels in JSON as `{"$html": "..."}`, and
// the renderer's caller turns the marks back into strings with takeHtmlValues, collecting them as
// RenderValues.trustedHtml.
//
// Only a producer that made the markup safe itself may mark it: takeHtmlValues is called on values an
// internal service built (an RSS issue's), never on a customer's substitutionData, where the same
// shape would be plain data.

export interface HtmlValue {
  $html: string;
}

/** Marks markup that is safe to print as is (sanitized by the caller). */
export const htmlValue = (html: string): HtmlValue => ({ $html: html });

const isHtmlValue = (v: unknown): v is HtmlValue =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as HtmlValue).$html === 'string' && Object.keys(v).length === 1;

/** Nesting below this depth is copied as it is (marks are set on item fields, two levels down). */
const MAX_DEPTH = 16;

/**
 * A copy of `values` with every htmlValue mark replaced by its string, and the set of those strings
 * (RenderValues.trustedHtml). Objects are rebuilt with own data properties only (a `__proto__` key
 * of parsed JSON stays a plain key).
 */
export function takeHtmlValues(values: Record<string, unknown>): { values: Record<string, unknown>; trustedHtml: Set<string> } {
  const trustedHtml = new Set<string>();
  const walk = (v: unknown, depth: number): unknown => {
    if (isHtmlValue(v)) {
      trustedHtml.add(v.$html);
      return v.$html;
    }
    if (depth >= MAX_DEPTH || typeof v !== 'object' || v === null) return v;
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, depth + 1)]));
  };
  return { values: walk(values, 0) as Record<string, unknown>, trustedHtml };
}
