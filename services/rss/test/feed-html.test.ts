// The sanitizer of feed item HTML (domain/feed-html.ts): what a hostile feed writes into `summary` or
// `content` never reaches a reader; an article's ordinary markup does.
import { readItem } from '../src/clients/feeds';
import { parseFeed } from '../src/domain/feed';
import { cleanItem } from '../src/domain/issues';
import { sanitizeFeedHtml } from '../src/domain/feed-html';

const BASE = 'https://blog.example/2026/11/post/';
const clean = (html: string) => sanitizeFeedHtml(html, BASE);

describe('sanitizeFeedHtml', () => {
  it('keeps an article: headings, paragraphs, emphasis, lists, tables, quotes, code, figures, links and images', () => {
    const article = '<h2>Title</h2><p>Some <strong>bold</strong>, <em>em</em> and <a href="https://blog.example/x" title="X">a link</a>.</p>'
      + '<ul><li>one</li><li>two</li></ul><ol start="3"><li>three</li></ol><blockquote><p>quote</p></blockquote><pre><code>x = 1</code></pre>'
      + '<table><thead><tr><th colspan="2">h</th></tr></thead><tbody><tr><td>a</td><td>b</td></tr></tbody></table>'
      + '<figure><img src="https://blog.example/a.jpg" alt="A" width="600" height="400" /><figcaption>Caption</figcaption></figure>';
    expect(clean(article)).toBe(article);
  });

  it('removes the phishing kit: form and its controls with their labels, script, style, event handlers, frames, plugins', () => {
    const hostile = '<p onclick="steal()" style="position:fixed;top:0" class="x" id="y">Read on</p>'
      + '<form action="https://phish.example/login" method="post"><p>Your bank password:</p><input name="password"><button>Log in</button></form>'
      + '<script>document.location="https://phish.example"</script><style>p{display:none}</style><noscript>no script</noscript>'
      + '<iframe src="https://phish.example/frame">frame text</iframe><object data="x.swf"><embed src="x.swf"></object>'
      + '<svg onload="x()"><a href="https://phish.example">svg</a></svg><img src="https://blog.example/ok.png" onerror="x()">';
    expect(clean(hostile)).toBe('<p>Read on</p><img src="https://blog.example/ok.png" />');
  });

  it('keeps only absolute http(s) URLs: javascript:, data:, vbscript:, mailto: and protocol tricks lose the attribute', () => {
    const links = ['javascript:alert(1)', 'JaVaScRiPt:alert(1)', ' java\nscript:alert(1)', 'data:text/html;base64,PHNjcmlwdD4=', 'vbscript:x', 'mailto:a@b.example', 'file:///etc/passwd']
      .map((href) => `<a href="${href}">t</a>`).join('');
    expect(clean(links)).toBe('<a>t</a>'.repeat(7));
    expect(clean('<img src="data:image/png;base64,iVBORw0KGgo=" alt="x">')).toBeNull();
    expect(clean('<a href="/about">About</a><a href="//cdn.example/x">cdn</a><img src="../img/a.png">')).toBe(
      '<a href="https://blog.example/about">About</a><a href="https://cdn.example/x">cdn</a><img src="https://blog.example/2026/11/img/a.png" />',
    );
  });

  it('removes tracking pixels: 1x1 or hidden images, whatever their host; visible images stay', () => {
    const pixels = [
      '<img src="https://pixel.wp.com/b.gif?host=blog" alt="" width="1" height="1">',
      '<img src="https://feeds.feedburner.com/~r/blog/~4/abc" height="1" width="1" alt=""/>',
      '<img src="https://t.example/o.gif" width="0" height="0">',
      '<img src="https://t.example/o.gif" style="width:1px;height:1px">',
      '<img src="https://t.example/o.gif" style="display: none !important">',
      '<img src="https://t.example/o.gif" style="visibility:hidden">',
      '<img src="https://t.example/o.gif" style="opacity:0">',
    ];
    for (const pixel of pixels) expect(clean(`<p>x</p>${pixel}`)).toBe('<p>x</p>');
    expect(clean('<img src="https://cdn.example/photo.jpg" width="10" height="10" style="width:100%">')).toBe('<img src="https://cdn.example/photo.jpg" width="10" height="10" />');
  });

  it('is stable: cleaning clean HTML changes nothing (issues built from stored items clean them again)', () => {
    const once = clean('<p onclick="x">a <a href="/b">b</a><img src="c.png" width="1" height="1"><img src="d.png"></p><script>x</script>');
    expect(once).toBe('<p>a <a href="https://blog.example/b">b</a><img src="https://blog.example/2026/11/post/d.png" /></p>');
    expect(clean(once!)).toBe(once);
  });

  it('nothing left is null', () => {
    expect(clean('<script>x</script>')).toBeNull();
    expect(sanitizeFeedHtml(null, BASE)).toBeNull();
  });
});

it('every format\'s summary and content are cleaned when an item is kept or shown (cleanItem), and never before', () => {
  const hostile = '<p>Hello</p><form action="https://phish.example/login"><input name="p"></form><script>x()</script><img src="https://t.example/p.gif" width="1" height="1">';
  const escaped = hostile.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const rss = `<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel><title>t</title><item><guid>1</guid><link>${BASE}</link>
<description>${escaped}</description><content:encoded><![CDATA[${hostile}]]></content:encoded></item></channel></rss>`;
  const atom = `<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><entry><id>1</id><title>a</title><link href="${BASE}"/>
<summary type="html">${escaped}</summary><content type="html">${escaped}</content></entry></feed>`;
  const json = JSON.stringify({ version: 'https://jsonfeed.org/version/1.1', title: 't', items: [{ id: '1', url: BASE, summary: hostile, content_html: hostile }] });
  for (const doc of [rss, atom, json]) {
    const [item] = parseFeed(doc, null, 'https://blog.example/feed').items;
    expect(item.untrustedHtml).toMatchObject({ summary: hostile, content: hostile }); // as the feed wrote it
    const kept = cleanItem(readItem(item));
    expect([kept.summary, kept.content]).toEqual(['<p>Hello</p>', '<p>Hello</p>']);
  }
});
