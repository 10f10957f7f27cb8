// Tracking instrumentation alone: which links are rewritten (and which never are), the originals kept
// in order, the pixel's place, and hostile HTML that must neither break out of an attribute nor get a
// link rewritten that a browser would not follow.
import { Parser } from 'htmlparser2';
import { instrumentHtml, MAX_TRACKED_LINKS, trackableUrl, type TrackingUrls } from '../src/readers/domain/tracking-html';

const urls: TrackingUrls = {
  openUrl: 'https://t.example/t/o/OPEN',
  clickUrl: (i) => `https://t.example/t/c/CLICK${i}`,
  keep: ['https://t.example/u/UNSUB', 'https://t.example/u/PREFS'],
};
const both = { opens: true, clicks: true };

/** The hrefs of every `<a>` and the srcs of every `<img>` as a browser's tokenizer reads them back. */
function readBack(html: string): { hrefs: string[]; imgs: string[]; attribs: Array<Record<string, string>> } {
  const hrefs: string[] = [];
  const imgs: string[] = [];
  const attribs: Array<Record<string, string>> = [];
  new Parser({
    onopentag(name, a) {
      if (name === 'a') {
        hrefs.push(a.href ?? '');
        attribs.push(a);
      }
      if (name === 'img') imgs.push(a.src ?? '');
    },
  }).end(html);
  return { hrefs, imgs, attribs };
}

describe('instrumentHtml', () => {
  it('rewrites http(s) links in order, keeps the originals, and adds the pixel before </body>', () => {
    const html = '<html><body><p>Hi</p><a href="https://shop.example/a?x=1&amp;y=2">A</a> <A HREF=\'http://b.example/\' class="btn">B</A></body></html>';
    const out = instrumentHtml(html, urls, both);
    expect(out.links).toEqual(['https://shop.example/a?x=1&y=2', 'http://b.example/']);
    const back = readBack(out.html);
    expect(back.hrefs).toEqual(['https://t.example/t/c/CLICK0', 'https://t.example/t/c/CLICK1']);
    expect(back.attribs[1]!.class).toBe('btn');
    expect(back.imgs).toEqual(['https://t.example/t/o/OPEN']);
    expect(out.html).toMatch(/<img src="https:\/\/t\.example\/t\/o\/OPEN"[^>]*\/><\/body><\/html>$/);
    // Everything that was not a rewritten tag is byte for byte the same.
    expect(out.html.startsWith('<html><body><p>Hi</p><a href="https://t.example/t/c/CLICK0">A</a> <a href="https://t.example/t/c/CLICK1" class="btn">B</A>')).toBe(true);
  });

  it('leaves mailto:, fragments, relative, javascript: and the unsubscribe/preference links alone', () => {
    const html = [
      '<a href="mailto:ann@example.com">m</a>',
      '<a href="#top">t</a>',
      '<a href="/relative">r</a>',
      '<a href="javascript:alert(1)">j</a>',
      '<a href=" java\tscript:alert(1)">j2</a>',
      '<a href="https://t.example/u/UNSUB">u</a>',
      '<a href="https://t.example/u/PREFS">p</a>',
      '<a name="anchor">n</a>',
      '<a href="tel:+123">tel</a>',
      '<a href="https://ok.example/">ok</a>',
    ].join('');
    const out = instrumentHtml(html, urls, { opens: false, clicks: true });
    expect(out.links).toEqual(['https://ok.example/']);
    expect(out.html).toBe(html.replace('<a href="https://ok.example/">', '<a href="https://t.example/t/c/CLICK0">'));
  });

  it('follows the flags: nothing changes with both off, only the pixel with opens, only links with clicks', () => {
    const html = '<body><a href="https://a.example/">a</a></body>';
    expect(instrumentHtml(html, urls, { opens: false, clicks: false })).toEqual({ html, links: [] });
    const opens = instrumentHtml(html, urls, { opens: true, clicks: false });
    expect(opens.links).toEqual([]);
    expect(readBack(opens.html)).toMatchObject({ hrefs: ['https://a.example/'], imgs: ['https://t.example/t/o/OPEN'] });
    const clicks = instrumentHtml(html, urls, { opens: false, clicks: true });
    expect(readBack(clicks.html)).toMatchObject({ hrefs: ['https://t.example/t/c/CLICK0'], imgs: [] });
  });

  it('appends the pixel at the end of a fragment without </body>', () => {
    const out = instrumentHtml('<p>no body</p>', urls, both);
    expect(out.html.startsWith('<p>no body</p><img src="https://t.example/t/o/OPEN"')).toBe(true);
  });

  it('stores the same URL twice when it is linked twice (each link has its own index)', () => {
    const out = instrumentHtml('<a href="https://a.example/">1</a><a href="https://a.example/">2</a>', urls, both);
    expect(out.links).toEqual(['https://a.example/', 'https://a.example/']);
    expect(readBack(out.html).hrefs).toEqual(['https://t.example/t/c/CLICK0', 'https://t.example/t/c/CLICK1']);
  });

  it(`rewrites at most ${MAX_TRACKED_LINKS} links and leaves the rest untracked`, () => {
    const html = Array.from({ length: MAX_TRACKED_LINKS + 5 }, (_, i) => `<a href="https://a.example/${i}">x</a>`).join('');
    const out = instrumentHtml(html, urls, { opens: false, clicks: true });
    expect(out.links).toHaveLength(MAX_TRACKED_LINKS);
    expect(readBack(out.html).hrefs.slice(-5)).toEqual([0, 1, 2, 3, 4].map((i) => `https://a.example/${MAX_TRACKED_LINKS + i}`));
  });

  describe('hostile HTML', () => {
    it('does not rewrite anchors inside comments, <script>, <style>, <title> or <textarea>', () => {
      const html = '<title><a href="https://x.example/1"></title><!-- <a href="https://x.example/2"> --><script>var s = \'<a href="https://x.example/3">\';</script><style>/* <a href="https://x.example/4"> */</style><textarea><a href="https://x.example/5"></textarea>';
      const out = instrumentHtml(html, urls, { opens: false, clicks: true });
      expect(out).toEqual({ html, links: [] });
    });

    it('re-escapes every attribute value it rebuilds, so nothing breaks out of the tag', () => {
      const html = `<a title='say "hi" & <b>' data-x="&quot;><script>alert(1)</script>" href="https://a.example/?q=&quot;&gt;<x>">a</a>`;
      const out = instrumentHtml(html, urls, both);
      expect(out.links).toEqual(['https://a.example/?q="><x>']);
      expect(out.html).not.toContain('<script>');
      expect(out.html).not.toContain('<b>');
      const back = readBack(out.html);
      expect(back.attribs[0]).toEqual({ title: 'say "hi" & <b>', 'data-x': '"><script>alert(1)</script>', href: 'https://t.example/t/c/CLICK0' });
    });

    it('escapes the click and open URLs too', () => {
      const odd: TrackingUrls = { openUrl: 'https://t.example/o?a=1&b="2"', clickUrl: () => 'https://t.example/c?a=1&b=<2>' };
      const out = instrumentHtml('<a href="https://a.example/">a</a>', odd, both);
      const back = readBack(out.html);
      expect(back.hrefs).toEqual(['https://t.example/c?a=1&b=<2>']);
      expect(back.imgs).toEqual(['https://t.example/o?a=1&b="2"']);
      expect(out.html).not.toContain('"2"');
    });

    it('takes the first of duplicate href attributes, as a browser does', () => {
      const out = instrumentHtml('<a href="javascript:alert(1)" href="https://a.example/">a</a><a href="https://b.example/" href="javascript:x">b</a>', urls, both);
      expect(out.links).toEqual(['https://b.example/']);
      expect(readBack(out.html).hrefs).toEqual(['javascript:alert(1)', 'https://t.example/t/c/CLICK0']);
    });

    it('handles unquoted, spaced and upper-case attributes and entity-encoded schemes', () => {
      const html = '<a\nHREF = https://a.example/x >a</a><a href="&#104;ttps://b.example/">b</a><a href="&#106;avascript:alert(1)">c</a>';
      const out = instrumentHtml(html, urls, both);
      expect(out.links).toEqual(['https://a.example/x', 'https://b.example/']);
    });

    it('survives broken markup: unclosed tags, stray quotes, a tag cut off at the end', () => {
      for (const html of ['<a href="https://a.example/', '<a href=https://a.example/ "x>y', '<<a href="https://a.example/">>', '</a><a', '<body></body></body>', '']) {
        const out = instrumentHtml(html, urls, both);
        expect(typeof out.html).toBe('string');
        // Whatever was rewritten reads back as a click link; nothing else gained a tag.
        const back = readBack(out.html);
        expect(back.imgs).toEqual(['https://t.example/t/o/OPEN']);
        expect(back.hrefs.filter((h) => h.startsWith('https://t.example/t/c/')).length).toBe(out.links.length);
      }
    });

    it('drops attribute names a browser would not read back as one name', () => {
      const out = instrumentHtml('<a href="https://a.example/" a"b="1" c=\'2\'>a</a>', urls, both);
      const back = readBack(out.html);
      expect(back.attribs[0]).toEqual({ href: 'https://t.example/t/c/CLICK0', c: '2' });
    });

    it('puts the pixel before a tag cut off at the very end (a browser drops that tag, and would drop a pixel after it)', () => {
      expect(instrumentHtml('<p>hi<a href="https://a.example/', urls, both).html).toMatch(/^<p>hi<img [^>]+\/><a href="https:\/\/a\.example\/$/);
    });

    it('puts the pixel before the first real </body>, not one in a comment', () => {
      const out = instrumentHtml('<body><!-- </body> --><p>x</p></body>', urls, { opens: true, clicks: false });
      expect(out.html).toMatch(/^<body><!-- <\/body> --><p>x<\/p><img [^>]+\/><\/body>$/);
    });
  });
});

describe('trackableUrl', () => {
  it.each([
    ['https://a.example/', 'https://a.example/'],
    ['  HTTP://A.example/x  ', 'HTTP://A.example/x'],
    ['ht\ttp://a.example/', 'http://a.example/'],
    ['http://', null],
    ['https://[bad/', null],
    ['ftp://a.example/', null],
    ['//a.example/', null],
    ['data:text/html,hi', null],
  ])('%j -> %j', (href, expected) => {
    expect(trackableUrl(href)).toBe(expected);
  });
});
