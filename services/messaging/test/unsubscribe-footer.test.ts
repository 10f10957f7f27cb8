// The unsubscribe footer of marketing mail alone: when the rendered html lacks a clickable link to the
// unsubscribe (or preference) URL, where the footer goes, and the text part's line.
import { instrumentHtml, type TrackingUrls } from '../src/readers/domain/tracking-html';
import { footerHtml, withTextFooter } from '../src/mail/domain/unsubscribe-footer';

const UNSUB = 'https://t.example/u/UNSUB';
const links = { unsubscribe: UNSUB, preferences: UNSUB };
const urls: TrackingUrls = { openUrl: 'https://t.example/t/o/OPEN', clickUrl: (i) => `https://t.example/t/c/CLICK${i}`, keep: [UNSUB], footerUnlessKept: footerHtml(links) };
const both = { opens: true, clicks: true };
const none = { opens: false, clicks: false };
const FOOTER = footerHtml(links);

describe('html footer', () => {
  it('goes before </body> and before the open pixel when the mail has no link to the unsubscribe URL; its links are never tracked', () => {
    const out = instrumentHtml('<html><body><p>Hi <a href="https://shop.example/">shop</a></p></body></html>', urls, both);
    expect(out.html).toMatch(new RegExp(`^<html><body><p>Hi <a href="https://t.example/t/c/CLICK0">shop</a></p>${FOOTER.replace(/[.?*+^$()[\]{}|\\]/g, '\\$&')}<img src="https://t.example/t/o/OPEN"[^>]*/></body></html>$`));
    expect(out.links).toEqual(['https://shop.example/']);
    expect(FOOTER).toContain(`<a href="${UNSUB}"`);
    expect(FOOTER).toMatch(/>Unsubscribe<\/a> &middot; <a [^>]+>Manage your preferences<\/a><\/div>$/);
  });

  it('is added with tracking off too, at the end of a document without </body>', () => {
    expect(instrumentHtml('<p>Hi</p>', urls, none).html).toBe(`<p>Hi</p>${FOOTER}`);
    // Without a footer to add and tracking off, nothing changes (transactional mail).
    expect(instrumentHtml('<p>Hi</p>', { ...urls, footerUnlessKept: null }, none).html).toBe('<p>Hi</p>');
  });

  it('is not added when a link goes to the URL, however the template writes it', () => {
    for (const html of [
      `<p>Hi</p><a href="${UNSUB}">Unsubscribe</a>`,
      `<p>Hi</p><A HREF='${UNSUB}' class="x">Leave</A>`,
      `<p>Hi</p><a href=" ${UNSUB.replace('/u/', '&#47;u&#47;')}\n">Leave</a>`,
    ]) {
      const out = instrumentHtml(html, urls, both);
      expect(out.html).not.toContain('Manage your preferences');
      expect(out.links).toEqual([]);
    }
  });

  it('is added when the URL is only text or in a comment: a reader must be able to click it', () => {
    for (const html of [`<p>Leave: ${UNSUB}</p>`, `<!-- <a href="${UNSUB}">x</a> -->`, `<img src="${UNSUB}">`]) {
      expect(instrumentHtml(html, urls, none).html).toBe(`${html}${FOOTER}`);
    }
  });
});

describe('text footer', () => {
  it('appends one line when the text lacks the URL, nothing when it has it', () => {
    expect(withTextFooter('Thanks for your order.\n', links)).toBe(`Thanks for your order.\n\n--\nUnsubscribe or manage your preferences: ${UNSUB}\n`);
    expect(withTextFooter(`Leave: ${UNSUB}`, links)).toBe(`Leave: ${UNSUB}`);
    expect(withTextFooter('', links)).toBe(`--\nUnsubscribe or manage your preferences: ${UNSUB}\n`);
  });

  it('names both pages when they differ', () => {
    expect(withTextFooter('Hi', { unsubscribe: 'https://x/u/1', preferences: 'https://x/p/1' })).toBe('Hi\n\n--\nUnsubscribe: https://x/u/1\nManage your preferences: https://x/p/1\n');
  });
});
