// Reader pages as HTML strings (every service's public pages share the look and the escaping): no template engine, no script, one inline stylesheet (allowed by
// its hash in the Content-Security-Policy), and every value that is not a literal of this file goes
// through `escapeHtml` (customer-provided text: topic labels, form labels, page texts).

export const STYLESHEET =
  'body{font-family:system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;color:#222;line-height:1.5}' +
  'fieldset{border:1px solid #ccc;border-radius:6px;padding:1rem}label{display:block;margin:.4rem 0}' +
  '.hint{color:#666;font-size:.9em;margin:0 0 .4rem 1.6rem}button{margin:1rem .5rem 0 0;padding:.5rem 1rem}' +
  // Signup forms (the form service's landing pages): inputs, errors, the off-screen honeypot.
  '.field{margin:0 0 1rem}input[type=text],input[type=email],input[type=number],input[type=date],textarea,select{box-sizing:border-box;width:100%;padding:.4rem}' +
  '.error{color:#b00020;margin:.2rem 0}.invalid input,.invalid textarea,.invalid select{border:2px solid #b00020}' +
  '.hp{position:absolute;left:-10000px;top:auto;width:1px;height:1px;overflow:hidden}';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text safe in element content and in double- or single-quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

export interface HtmlPageOptions {
  /**
   * The page's own referrer policy (a `<meta name="referrer">`, which overrides the listener's
   * `Referrer-Policy: no-referrer` for this page only), e.g. `same-origin` for a page whose form
   * posts back to its own origin and must say which origin that is.
   */
  referrerPolicy?: 'same-origin';
}

/** The page around `body` (already HTML): one stylesheet, no script, not indexed. */
export function htmlPage(title: string, body: string, opts: HtmlPageOptions = {}): string {
  const referrer = opts.referrerPolicy ? `\n<meta name="referrer" content="${opts.referrerPolicy}">` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">${referrer}
<title>${escapeHtml(title)}</title>
<style>${STYLESHEET}</style>
</head>
<body>
${body}
</body>
</html>
`;
}

/** A page with a heading and one paragraph (not found, bad request, unavailable, errors). */
export function messagePage(title: string, text: string): string {
  return htmlPage(title, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(text)}</p>`);
}

