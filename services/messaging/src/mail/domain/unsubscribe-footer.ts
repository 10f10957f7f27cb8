// The visible way out of marketing mail (automation, RSS, broadcast mail; never transactional). A
// template should place `links.unsubscribe` itself, where it fits its design; when the rendered mail
// has no such link, the mail gets this short footer, in both parts, as the large mailbox providers
// require of bulk senders (the List-Unsubscribe header alone is not shown by every client):
// - html: "lacks" means no `<a href>` of the rendered html goes to the unsubscribe or preference URL
//   (tracking-html.ts checks it while it parses the html anyway); the URL only as text, or in a
//   comment, does not count: a reader must be able to click it;
// - text: "lacks" means the text does not contain the URL (the text derived from html lists every
//   link's URL, so it has it exactly when the html has the link).
// Pure.
import { escapeAttribute } from '../../readers/domain/tracking-html';

export interface ManageLinks {
  unsubscribe: string;
  preferences: string;
}

const LINK_STYLE = 'color:#6b6b6b;text-decoration:underline';

/** The html footer (inline styles only: mail clients drop style sheets). */
export function footerHtml(links: ManageLinks): string {
  const a = (url: string, label: string) => `<a href="${escapeAttribute(url)}" style="${LINK_STYLE}">${label}</a>`;
  return '<div style="margin:24px 0 0;padding:16px 0 0;border-top:1px solid #e0e0e0;font-family:Helvetica,Arial,sans-serif;font-size:12px;line-height:1.5;color:#6b6b6b;text-align:center">'
    + `${a(links.unsubscribe, 'Unsubscribe')} &middot; ${a(links.preferences, 'Manage your preferences')}</div>`;
}

/** The text part with the footer appended when it holds neither URL. */
export function withTextFooter(text: string, links: ManageLinks): string {
  if (text.includes(links.unsubscribe) || text.includes(links.preferences)) return text;
  const lines = links.unsubscribe === links.preferences
    ? [`Unsubscribe or manage your preferences: ${links.unsubscribe}`]
    : [`Unsubscribe: ${links.unsubscribe}`, `Manage your preferences: ${links.preferences}`];
  const body = text.replace(/\s+$/, '');
  return `${body ? `${body}\n\n` : ''}--\n${lines.join('\n')}\n`;
}
