// Reading feeds (domain/feed.ts): every format into one shape, the identity rules of the API contract "RSS
// newsletters" (guid, else link, else a hash of title and date; a changed guid with a seen link is not
// new), and a precise feed_unreadable for what is not a feed.
import { FeedError, itemKey, parseDate, parseFeed, sanitizeItemHtml, unseenItems, type FeedItem } from '../src/domain/feed';
import { ATOM, JSON_FEED, RDF, RSS2 } from './support/feed-samples';

const unreadable = (body: string, contentType: string | null = null): FeedError => {
  try {
    parseFeed(body, contentType, 'https://feeds.example.com/feed');
  } catch (err) {
    expect(err).toBeInstanceOf(FeedError);
    expect((err as FeedError).code).toBe('feed_unreadable');
    return err as FeedError;
  }
  throw new Error('expected feed_unreadable');
};

/** parseFeed, each item's HTML sanitized as it is when an item is kept or shown (FeedItem.untrustedHtml). */
function parseClean(...args: Parameters<typeof parseFeed>) {
  const feed = parseFeed(...args);
  return { ...feed, items: feed.items.map(({ untrustedHtml, ...item }) => ({ ...item, ...sanitizeItemHtml(untrustedHtml) })) };
}

describe('parseFeed: the four formats', () => {
  it('RSS 2.0 (WordPress): CDATA and encoded HTML, dc:creator, relative links, image enclosures and Media RSS, newest first', () => {
    const feed = parseClean(RSS2, 'application/rss+xml; charset=UTF-8', 'https://bakery.example.com/feed/');
    expect({ ...feed, items: [] }).toEqual({ title: 'The Bakery Blog & Co.', siteUrl: 'https://bakery.example.com/', feedUrl: 'https://bakery.example.com/feed/', items: [] });
    expect(feed.items).toEqual([
      {
        key: 'https://bakery.example.com/?p=1210',
        guid: 'https://bakery.example.com/?p=1210',
        title: 'Our new oven',
        link: 'https://bakery.example.com/2026/11/new-oven/', // relative, resolved against the feed's URL
        publishedAt: new Date('2026-11-24T07:00:00Z'),
        summary: 'We bought an <em>oven</em> \u2013 finally.', // entity-encoded HTML, decoded once: HTML
        content: null,
        author: null,
        imageUrl: 'https://bakery.example.com/oven.jpg', // an image enclosure
      },
      {
        key: 'https://bakery.example.com/?p=1203',
        guid: 'https://bakery.example.com/?p=1203',
        title: 'Sourdough starter, day 3', // the line break inside the title collapsed
        link: 'https://bakery.example.com/2026/11/sourdough-day-3/',
        publishedAt: new Date('2026-11-23T08:30:00Z'), // +0100
        summary: '<p>Bubbles! The starter &amp; I are friends now.</p>', // CDATA kept as given
        content: '<p>Bubbles! The starter &amp; I are <strong>friends</strong> now.</p><img src="https://bakery.example.com/wp-content/uploads/starter.jpg" alt="" />', // sanitized (feed-html.ts)
        author: 'Marie Baker',
        imageUrl: 'https://bakery.example.com/wp-content/uploads/starter-150x150.jpg', // media:thumbnail
      },
      {
        key: 'https://bakery.example.com/podcast/rye',
        guid: 'https://bakery.example.com/podcast/rye',
        title: 'Podcast: rye',
        link: 'https://bakery.example.com/podcast/rye', // a permalink guid stands in for the missing link
        publishedAt: new Date('2026-11-22T10:00:00Z'), // "CEST", a zone name Date.parse does not know
        summary: 'Listen in.',
        content: null,
        author: 'Marie Baker', // <author>email (name)</author>
        imageUrl: 'https://cdn.example.net/rye-cover.png', // the audio enclosure is no image; media:content is
      },
      {
        key: itemKey({ guid: null, link: null, title: 'Undated note', publishedAt: null }),
        guid: null,
        title: 'Undated note',
        link: null, // javascript: never reaches a mail
        publishedAt: null, // undated: last
        summary: 'No date, a link no mail should carry.',
        content: null,
        author: null,
        imageUrl: null,
      },
    ]);
  });

  it('Atom: html / text / xhtml constructs, rel=alternate and self links, published before updated, enclosure and thumbnail images', () => {
    const feed = parseClean(ATOM, 'application/atom+xml', 'https://jane.example.org/atom.xml');
    expect({ ...feed, items: [] }).toEqual({ title: 'Jane & the Compilers', siteUrl: 'https://jane.example.org/', feedUrl: 'https://jane.example.org/atom.xml', items: [] });
    expect(feed.items).toEqual([
      {
        key: 'tag:jane.example.org,2026-11-24:/posts/xhtml',
        guid: 'tag:jane.example.org,2026-11-24:/posts/xhtml',
        title: 'XHTML content',
        link: 'https://jane.example.org/posts/xhtml/', // a link without rel is the alternate
        publishedAt: new Date('2026-11-24T10:00:00Z'), // no published: updated
        summary: null,
        content: '<p>Inline <b>markup</b> &amp; entities.</p>',
        author: null,
        imageUrl: 'https://jane.example.org/img/xhtml-thumb.jpg',
      },
      {
        key: 'tag:jane.example.org,2026-11-20:/posts/script-tags',
        guid: 'tag:jane.example.org,2026-11-20:/posts/script-tags',
        title: 'Why <script> tags are hard', // plain text (the template escapes it)
        link: 'https://jane.example.org/posts/script-tags/', // rel=alternate, not replies
        publishedAt: new Date('2026-11-20T06:00:00Z'),
        summary: 'A &lt; B &amp; C, in plain text', // type text: escaped into HTML
        content: '<p>Escaping is <em>hard</em>.</p>', // type html
        author: 'Jane Doe',
        imageUrl: 'https://jane.example.org/img/script.png', // rel=enclosure with an image type
      },
    ]);
  });

  it('RDF / RSS 1.0: rdf:about as identity, dc:date and dc:creator, content:encoded', () => {
    const feed = parseClean(RDF, 'application/rdf+xml', 'https://news.example.com/index.rdf');
    expect({ ...feed, items: [] }).toEqual({ title: 'Example News', siteUrl: 'https://news.example.com/', feedUrl: 'https://news.example.com/index.rdf', items: [] });
    expect(feed.items.map((i) => [i.key, i.link, i.publishedAt?.toISOString(), i.author, i.summary, i.content])).toEqual([
      ['https://news.example.com/story/26/11/24/2', 'https://news.example.com/story/26/11/24/2?utm_source=rss', '2026-11-24T06:00:00.000Z', 'editor7', 'More boards than ever.', '<p>More <a href="https://news.example.com/boards">boards</a> than ever.</p>'], // relative href made absolute
      ['https://news.example.com/story/26/11/23/1', 'https://news.example.com/story/26/11/23/1?utm_source=rss', '2026-11-23T14:05:00.000Z', 'editor42', 'The new kernel is out.', null],
    ]);
  });

  it('JSON Feed 1.1: content_html, content_text escaped, date_published or date_modified, image, attachment image, feed author', () => {
    const feed = parseClean(JSON_FEED, 'application/feed+json', 'https://json.example.com/feed.json');
    expect({ ...feed, items: [] }).toEqual({ title: 'Daring Example', siteUrl: 'https://json.example.com/', feedUrl: 'https://json.example.com/feed.json', items: [] });
    expect(feed.items).toEqual([
      {
        key: '12345', // a numeric id is read as its string
        guid: '12345',
        title: null,
        link: 'https://json.example.com/2026/11/23/text',
        publishedAt: new Date('2026-11-23T10:00:00Z'),
        summary: null,
        content: 'Plain text with &lt;angle&gt; brackets &amp; ampersands',
        author: 'Site Author',
        imageUrl: 'https://json.example.com/a.webp',
      },
      {
        key: '2026-11-22-hello',
        guid: '2026-11-22-hello',
        title: 'Hello, JSON',
        link: 'https://json.example.com/2026/11/22/hello',
        publishedAt: new Date('2026-11-22T15:00:00Z'),
        summary: 'A first post',
        content: '<p>Hello <i>world</i></p>',
        author: 'Alex',
        imageUrl: 'https://json.example.com/images/hello.jpg',
      },
    ]);
  });

  it('the body decides, not the content type: a feed served as text/html or text/plain is read', () => {
    expect(parseClean(RSS2, 'text/html', 'https://bakery.example.com/feed/').items).toHaveLength(4);
    expect(parseClean(JSON_FEED, 'text/plain', null).items).toHaveLength(2);
    expect(parseClean(`\uFEFF\n  ${ATOM}`, null, null).items).toHaveLength(2); // BOM and leading blank lines
  });

  it('without a base URL, relative links resolve against the feed\'s own URL; with none, they are null', () => {
    // the RSS sample's atom:link rel=self is https://bakery.example.com/feed/
    expect(parseClean(RSS2, null).items[0].link).toBe('https://bakery.example.com/2026/11/new-oven/');
    const bare = `<rss version="2.0"><channel><title>t</title><item><title>a</title><link>/a</link></item></channel></rss>`;
    expect(parseClean(bare, null).items[0]).toMatchObject({ link: null, guid: null, title: 'a' });
  });

  it('summary and content HTML are sanitized, relative URLs made absolute against the item\'s page', () => {
    const doc = `<rss version="2.0"><channel><title>t</title><link>https://site.example.com/</link>
<item><guid>1</guid><link>https://site.example.com/2026/11/post/</link>
<description><![CDATA[<a href="/about">About</a> <img src='pics/a.png' alt=x> <a href="#top">top</a> <a href="mailto:a@b.c">mail</a> <a href="javascript:void(0)">js</a> <a class=x HREF = "//cdn.example.net/f?a=1&amp;b=2">cdn</a> <p>href="/not-an-attribute"</p>]]></description>
<content:encoded xmlns:content="http://purl.org/rss/1.0/modules/content/"><![CDATA[<video poster="../poster.jpg" src="https://v.example.com/v.mp4"></video>]]></content:encoded></item>
<item><guid>2</guid><description><![CDATA[<img src="/no-link.png">]]></description></item></channel></rss>`;
    const [post, bare] = parseClean(doc, null, 'https://site.example.com/feed.xml').items;
    // Links other than http(s) keep their text only; a fragment points into the item's page.
    expect(post.summary).toBe(
      '<a href="https://site.example.com/about">About</a> <img src="https://site.example.com/2026/11/post/pics/a.png" alt="x" /> <a href="https://site.example.com/2026/11/post/#top">top</a> <a>mail</a> <a>js</a> <a href="https://cdn.example.net/f?a=1&amp;b=2">cdn</a> <p>href="/not-an-attribute"</p>',
    );
    expect(post.content).toBeNull(); // a video is no mail content: nothing is left
    expect(bare.summary).toBe('<img src="https://site.example.com/no-link.png" />'); // no item link: the feed's URL
  });

  it('RSS 0.91 with a DOCTYPE, and an empty channel', () => {
    const rss091 = `<?xml version="1.0"?><!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN" "http://my.netscape.com/publish/formats/rss-0.91.dtd">
<rss version="0.91"><channel><title>Old</title><link>http://old.example.com/</link><description>d</description><language>en</language>
<item><title>First</title><link>http://old.example.com/1</link><description>one</description></item></channel></rss>`;
    expect(parseClean(rss091, 'text/xml', 'http://old.example.com/rss.xml').items).toEqual([expect.objectContaining({ key: 'http://old.example.com/1', guid: null, link: 'http://old.example.com/1' })]);
    expect(parseClean('<rss version="2.0"><channel><title>Empty</title></channel></rss>', null).items).toEqual([]);
  });

  it('entity declarations in a DTD are not expanded (no entity-expansion bomb)', () => {
    const lol = `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>
<rss version="2.0"><channel><title>&c;</title><item><title>&c;</title><guid>1</guid></item></channel></rss>`;
    const feed = parseClean(lol, null);
    expect(feed.items[0].title!.length).toBeLessThan(10);
  });
});

describe('parseFeed: feed_unreadable says what is wrong', () => {
  it('broken XML: truncated, mismatched tags, a bare ampersand, with line and column', () => {
    const truncated = RSS2.slice(0, RSS2.indexOf('<title>Our new oven'));
    expect(unreadable(truncated).message).toMatch(/^the feed is not well-formed XML: .* \(line \d+, column \d+\)$/);
    expect(unreadable('<rss version="2.0"><channel><title>x</title><item><title>a</item></channel></rss>').message).toMatch(/not well-formed XML.*title/);
    expect(unreadable('<rss version="2.0"><channel><title>Fish & Chips</title></channel></rss>').message).toMatch(/not well-formed XML: .*'&'.*\(line 1, column \d+\)/);
  });

  it('an HTML page that advertises its feed names it (autodiscovery), resolved against the page', () => {
    const page = `<!doctype html><html><head><title>Blog</title><link rel="stylesheet" href="/s.css">
<link rel="alternate" type="application/rss+xml" title="Blog &raquo; Feed" href="/feed/?format=rss&amp;x=1" />
<link rel="alternate" type="application/atom+xml" href="https://feeds.example.com/atom"></head><body></body></html>`;
    expect(unreadable(page, 'text/html').message).toBe('the address serves an HTML page, not a feed; the page names its feed: https://feeds.example.com/feed/?format=rss&x=1');
    expect(unreadable("<html><head><link href='/j.json' type='application/feed+json' rel='alternate'></head></html>").message).toMatch(/names its feed: https:\/\/feeds\.example\.com\/j\.json$/);
    expect(unreadable('<html><head><link rel="alternate" type="text/html" href="/fr/"></head></html>').message).toBe('the address serves an HTML page, not a feed');
  });

  it('an HTML page, other XML, JSON that is no feed, bad JSON, plain text, an empty body', () => {
    expect(unreadable('<!DOCTYPE html>\n<html lang="en"><head><title>Blog</title></head><body></body></html>', 'text/html').message).toMatch(/HTML page, not a feed/);
    expect(unreadable('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"></svg>').message).toBe('the document is XML but not an RSS, Atom or RDF feed');
    expect(unreadable('{"data":[1,2,3]}', 'application/json').message).toMatch(/JSON but not a JSON Feed/);
    expect(unreadable('{"version": "https://jsonfeed.org/version/1.1", "title": ', 'application/feed+json').message).toMatch(/^the feed is not valid JSON: /);
    expect(unreadable('Service temporarily unavailable', 'text/plain').message).toBe('the document is not a feed (text/plain, neither XML nor JSON)');
    expect(unreadable('  \n ', 'application/rss+xml').message).toBe('the feed is empty');
  });

  it('messages stay short whatever the document holds', () => {
    const long = `<rss><channel><title>${'x'.repeat(5000)}</titl></channel></rss>`;
    expect(unreadable(long).message.length).toBeLessThan(300);
  });
});

describe('dates', () => {
  it.each([
    ['Mon, 23 Nov 2026 09:30:00 +0100', '2026-11-23T08:30:00.000Z'],
    ['Mon, 23 Nov 2026 09:30:00 GMT', '2026-11-23T09:30:00.000Z'],
    ['23 Nov 2026 09:30:00 EST', '2026-11-23T14:30:00.000Z'],
    ['Mon, 23 Nov 2026 09:30:00 CEST', '2026-11-23T07:30:00.000Z'],
    ['Mon, 23 Nov 2026 09:30:00 UTC', '2026-11-23T09:30:00.000Z'],
    ['Mon, 23 Nov 2026 09:30 +0000 (UTC)', '2026-11-23T09:30:00.000Z'],
    ['Monday, 23 Nov 2026 09:30:00 GMT', '2026-11-23T09:30:00.000Z'],
    ['2026-11-23T09:30:00Z', '2026-11-23T09:30:00.000Z'],
    ['2026-11-23T09:30:00.123+05:30', '2026-11-23T04:00:00.123Z'],
    ['2026-11-23', '2026-11-23T00:00:00.000Z'],
  ])('%s', (raw, iso) => {
    expect(parseDate(raw)?.toISOString()).toBe(iso);
  });
  it.each(['', 'yesterday', 'Mon, 99 Foo 2026', '0000-01-01T00:00:00Z'])('unreadable %j -> null', (raw) => {
    expect(parseDate(raw)).toBeNull();
  });
  it('an unreadable pubDate falls back to dc:date, and an item with none is undated', () => {
    const doc = `<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>t</title>
<item><guid>a</guid><title>A</title><pubDate>sometime</pubDate><dc:date>2026-11-20T10:00:00Z</dc:date></item>
<item><guid>b</guid><title>B</title><pubDate>soon</pubDate></item>
<item><guid>c</guid><title>C</title><pubDate>Sat, 21 Nov 2026 10:00:00 GMT</pubDate></item></channel></rss>`;
    expect(parseClean(doc, null).items.map((i) => [i.key, i.publishedAt?.toISOString() ?? null])).toEqual([
      ['c', '2026-11-21T10:00:00.000Z'],
      ['a', '2026-11-20T10:00:00.000Z'],
      ['b', null],
    ]);
  });
});

const item = (over: Partial<FeedItem>): FeedItem => {
  const base = { guid: null, title: null, link: null, publishedAt: null, author: null, imageUrl: null, untrustedHtml: { summary: null, content: null, base: null }, ...over };
  return { ...base, key: over.key ?? itemKey(base) };
};

describe('itemKey: guid, else link, else a hash of title and date', () => {
  it('takes the guid, then the link', () => {
    expect(itemKey({ guid: 'g-1', link: 'https://e.com/1', title: 'T', publishedAt: null })).toBe('g-1');
    expect(itemKey({ guid: null, link: 'https://e.com/1', title: 'T', publishedAt: null })).toBe('https://e.com/1');
  });
  it('hashes title and date: the same pair the same key, a different title or date another', () => {
    const d = new Date('2026-11-23T10:00:00Z');
    const k = itemKey({ guid: null, link: null, title: 'Hello', publishedAt: d });
    expect(k).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(itemKey({ guid: null, link: null, title: 'Hello', publishedAt: new Date(d) })).toBe(k);
    expect(itemKey({ guid: null, link: null, title: 'Hello!', publishedAt: d })).not.toBe(k);
    expect(itemKey({ guid: null, link: null, title: 'Hello', publishedAt: new Date('2026-11-23T10:00:01Z') })).not.toBe(k);
    expect(itemKey({ guid: null, link: null, title: 'Hello', publishedAt: null })).not.toBe(k);
  });
  it('a guid too long to store is stored as its hash, still stable', () => {
    const guid = `urn:${'x'.repeat(2000)}`;
    expect(itemKey({ guid, link: null, title: null, publishedAt: null })).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(itemKey({ guid, link: null, title: null, publishedAt: null })).toBe(itemKey({ guid, link: 'https://other', title: 'x', publishedAt: null }));
  });
  it('parseFeed gives every item its key', () => {
    for (const [doc, url] of [[RSS2, 'https://bakery.example.com/feed/'], [ATOM, null], [RDF, null], [JSON_FEED, null]] as const) {
      for (const i of parseClean(doc, null, url).items) expect(i.key).toBe(itemKey(i));
    }
  });
});

describe('unseenItems', () => {
  const seenOf = (items: FeedItem[]) => ({ keys: new Set(items.map((i) => i.key)), links: new Set(items.flatMap((i) => (i.link ? [i.link] : []))) });

  it('nothing is new right after the baseline; new items come out newest first', () => {
    const before = parseClean(RSS2, null, 'https://bakery.example.com/feed/').items;
    expect(unseenItems(before, seenOf(before))).toEqual([]);
    const next = RSS2.replace(
      '<item>',
      `<item><title>Rye, part 2</title><link>https://bakery.example.com/2026/11/rye-2/</link><guid isPermaLink="false">https://bakery.example.com/?p=1220</guid><pubDate>Wed, 25 Nov 2026 07:00:00 GMT</pubDate></item>
       <item><title>Rolls</title><link>https://bakery.example.com/2026/11/rolls/</link><guid isPermaLink="false">https://bakery.example.com/?p=1215</guid><pubDate>Tue, 24 Nov 2026 18:00:00 GMT</pubDate></item><item>`,
    );
    const after = parseClean(next, null, 'https://bakery.example.com/feed/').items;
    expect(unseenItems(after, seenOf(before)).map((i) => i.title)).toEqual(['Rye, part 2', 'Rolls']);
  });

  it('an item whose guid changed but whose link was seen is not new; a new guid with a new link is', () => {
    const seen = seenOf([item({ guid: 'old-guid', link: 'https://e.com/post' })]);
    expect(unseenItems([item({ guid: 'new-guid', link: 'https://e.com/post' })], seen)).toEqual([]);
    const fresh = item({ guid: 'new-guid-2', link: 'https://e.com/other' });
    expect(unseenItems([fresh], seen)).toEqual([fresh]);
  });

  it('a feed whose guids all change while its links stay has no unseen items', () => {
    const before = parseClean(RSS2, null, 'https://bakery.example.com/feed/').items;
    // a CMS migration: every guid rewritten (p=1203 -> uuid), links unchanged
    let n = 0;
    const migrated = RSS2.replace(/<guid isPermaLink="false">[^<]*<\/guid>/g, () => `<guid isPermaLink="false">urn:uuid:00000000-0000-4000-8000-00000000000${n++}</guid>`);
    const after = parseClean(migrated, null, 'https://bakery.example.com/feed/').items;
    expect(n).toBe(2);
    expect(after.filter((i) => i.title === 'Our new oven' || i.title?.startsWith('Sourdough')).map((i) => seenOf(before).keys.has(i.key))).toEqual([false, false]); // their keys did change
    expect(unseenItems(after, seenOf(before))).toEqual([]);
  });

  it('a seen key is not new even when its link changed (a typo fixed in a URL)', () => {
    const seen = seenOf([item({ guid: 'g1', link: 'https://e.com/tpyo' })]);
    expect(unseenItems([item({ guid: 'g1', link: 'https://e.com/typo' })], seen)).toEqual([]);
  });

  it('items without guid and link are known by title and date', () => {
    const d = new Date('2026-11-23T10:00:00Z');
    const seen = seenOf([item({ title: 'Note', publishedAt: d })]);
    expect(unseenItems([item({ title: 'Note', publishedAt: d })], seen)).toEqual([]);
    expect(unseenItems([item({ title: 'Note', publishedAt: new Date('2026-11-24T10:00:00Z') })], seen)).toHaveLength(1);
  });

  it('an item listed twice in one feed comes out once', () => {
    const empty = { keys: new Set<string>(), links: new Set<string>() };
    const a = item({ guid: 'a', link: 'https://e.com/a', title: 'first' });
    expect(unseenItems([a, item({ guid: 'a', link: 'https://e.com/a2', title: 'again' })], empty)).toEqual([a]);
  });

  it('items sharing one link (a deals feed pointing at its landing page): a new guid next to a seen item with that link is new', () => {
    const L = 'https://shop.example.com/deals';
    const a = item({ guid: 'deal-1', link: L, title: 'Deal 1' });
    const b = item({ guid: 'deal-2', link: L, title: 'Deal 2' });
    const seen = seenOf([a, b]);
    const c = item({ guid: 'deal-3', link: L, title: 'Deal 3' });
    const d = item({ guid: 'deal-4', link: L, title: 'Deal 4' });
    expect(unseenItems([d, c, b, a], seen)).toEqual([d, c]);
    // but with every guid renamed (no seen item left carrying the link) nothing is new
    expect(unseenItems([item({ guid: 'x-1', link: L }), item({ guid: 'x-2', link: L })], seen)).toEqual([]);
  });

  it('some guids renamed, others kept: the renamed ones are not new, a genuinely new item is', () => {
    const before = [item({ guid: 'p1', link: 'https://e.com/1' }), item({ guid: 'p2', link: 'https://e.com/2' })];
    const renamed = item({ guid: 'uuid-1', link: 'https://e.com/1' });
    const fresh = item({ guid: 'uuid-3', link: 'https://e.com/3' });
    expect(unseenItems([fresh, renamed, before[1]], seenOf(before))).toEqual([fresh]);
  });
});
