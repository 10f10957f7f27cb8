// Realistic feed documents, one per format, shaped like what blogs and CMSes publish (WordPress RSS,
// a static-site Atom feed, a Slashdot-style RDF feed, a JSON Feed 1.1), with the quirks the reader must
// handle: CDATA and entity-encoded HTML, relative links, namespaces, image enclosures next to podcast
// audio, items out of date order, missing fields.

export const RSS2 = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"
  xmlns:content="http://purl.org/rss/1.0/modules/content/"
  xmlns:wfw="http://wellformedweb.org/CommentAPI/"
  xmlns:dc="http://purl.org/dc/elements/1.1/"
  xmlns:atom="http://www.w3.org/2005/Atom"
  xmlns:sy="http://purl.org/rss/1.0/modules/syndication/"
  xmlns:media="http://search.yahoo.com/mrss/">
<channel>
  <title>The Bakery Blog &amp; Co.</title>
  <atom:link href="https://bakery.example.com/feed/" rel="self" type="application/rss+xml" />
  <link>https://bakery.example.com</link>
  <description>Fresh bread, every week</description>
  <lastBuildDate>Tue, 24 Nov 2026 08:15:02 +0000</lastBuildDate>
  <language>en-US</language>
  <sy:updatePeriod>hourly</sy:updatePeriod>
  <generator>https://wordpress.org/?v=6.7</generator>
  <item>
    <title>Sourdough
      starter, day 3</title>
    <link>https://bakery.example.com/2026/11/sourdough-day-3/</link>
    <dc:creator><![CDATA[Marie Baker]]></dc:creator>
    <pubDate>Mon, 23 Nov 2026 09:30:00 +0100</pubDate>
    <category><![CDATA[Bread]]></category>
    <guid isPermaLink="false">https://bakery.example.com/?p=1203</guid>
    <description><![CDATA[<p>Bubbles! The starter &amp; I are friends now.</p>]]></description>
    <content:encoded><![CDATA[<p>Bubbles! The starter &amp; I are <strong>friends</strong> now.</p><img src="https://bakery.example.com/wp-content/uploads/starter.jpg" alt="">]]></content:encoded>
    <media:thumbnail url="https://bakery.example.com/wp-content/uploads/starter-150x150.jpg" width="150" height="150" />
  </item>
  <item>
    <title>Our new oven</title>
    <link>/2026/11/new-oven/</link>
    <pubDate>Tue, 24 Nov 2026 07:00:00 GMT</pubDate>
    <guid isPermaLink="false">https://bakery.example.com/?p=1210</guid>
    <description>We bought an &lt;em&gt;oven&lt;/em&gt; &#8211; finally.</description>
    <enclosure url="https://bakery.example.com/oven.jpg" length="48213" type="image/jpeg" />
  </item>
  <item>
    <title>Podcast: rye</title>
    <guid>https://bakery.example.com/podcast/rye</guid>
    <pubDate>Sun, 22 Nov 2026 12:00:00 CEST</pubDate>
    <author>marie@bakery.example.com (Marie Baker)</author>
    <description>Listen in.</description>
    <enclosure url="https://bakery.example.com/rye.mp3" length="12345678" type="audio/mpeg" />
    <media:content url="https://cdn.example.net/rye-cover.png" medium="image" />
  </item>
  <item>
    <title>Undated note</title>
    <link>javascript:alert(1)</link>
    <description>No date, a link no mail should carry.</description>
  </item>
</channel>
</rss>
`;

export const ATOM = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/" xml:lang="en">
  <title type="html">Jane &amp;amp; the Compilers</title>
  <subtitle>Notes on parsing</subtitle>
  <link href="/" rel="alternate" type="text/html"/>
  <link href="/atom.xml" rel="self" type="application/atom+xml"/>
  <id>tag:jane.example.org,2020:blog</id>
  <updated>2026-11-24T10:00:00Z</updated>
  <author><name>Jane Doe</name><uri>https://jane.example.org/</uri></author>
  <entry>
    <title>Why &lt;script&gt; tags are hard</title>
    <link href="/posts/script-tags/" rel="alternate" type="text/html"/>
    <link href="/posts/script-tags/comments.atom" rel="replies" type="application/atom+xml"/>
    <link href="/img/script.png" rel="enclosure" type="image/png" length="2048"/>
    <id>tag:jane.example.org,2026-11-20:/posts/script-tags</id>
    <published>2026-11-20T08:00:00+02:00</published>
    <updated>2026-11-21T09:00:00Z</updated>
    <author><name>Jane Doe</name></author>
    <summary>A &lt; B &amp; C, in plain text</summary>
    <content type="html">&lt;p&gt;Escaping is &lt;em&gt;hard&lt;/em&gt;.&lt;/p&gt;</content>
  </entry>
  <entry>
    <title type="text">XHTML content</title>
    <link href="https://jane.example.org/posts/xhtml/"/>
    <id>tag:jane.example.org,2026-11-24:/posts/xhtml</id>
    <updated>2026-11-24T10:00:00Z</updated>
    <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Inline <b>markup</b> &amp; entities.</p></div></content>
    <media:thumbnail url="https://jane.example.org/img/xhtml-thumb.jpg"/>
  </entry>
</feed>
`;

export const RDF = `<?xml version="1.0" encoding="ISO-8859-1"?>
<rdf:RDF
  xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
  xmlns="http://purl.org/rss/1.0/"
  xmlns:dc="http://purl.org/dc/elements/1.1/"
  xmlns:slash="http://purl.org/rss/1.0/modules/slash/"
  xmlns:content="http://purl.org/rss/1.0/modules/content/">
  <channel rdf:about="https://news.example.com/index.rdf">
    <title>Example News</title>
    <link>https://news.example.com/</link>
    <description>News for nerds</description>
    <dc:language>en-us</dc:language>
    <items>
      <rdf:Seq>
        <rdf:li rdf:resource="https://news.example.com/story/26/11/23/1"/>
        <rdf:li rdf:resource="https://news.example.com/story/26/11/24/2"/>
      </rdf:Seq>
    </items>
  </channel>
  <item rdf:about="https://news.example.com/story/26/11/23/1">
    <title>Kernel 9.1 released</title>
    <link>https://news.example.com/story/26/11/23/1?utm_source=rss</link>
    <description>The new kernel is out.</description>
    <dc:creator>editor42</dc:creator>
    <dc:date>2026-11-23T14:05:00+00:00</dc:date>
    <slash:comments>212</slash:comments>
  </item>
  <item rdf:about="https://news.example.com/story/26/11/24/2">
    <title>Open hardware grows</title>
    <link>https://news.example.com/story/26/11/24/2?utm_source=rss</link>
    <description>More boards than ever.</description>
    <content:encoded><![CDATA[<p>More <a href="/boards">boards</a> than ever.</p>]]></content:encoded>
    <dc:creator>editor7</dc:creator>
    <dc:date>2026-11-24T06:00:00Z</dc:date>
  </item>
</rdf:RDF>
`;

export const JSON_FEED = JSON.stringify({
  version: 'https://jsonfeed.org/version/1.1',
  title: 'Daring Example',
  home_page_url: 'https://json.example.com/',
  feed_url: 'https://json.example.com/feed.json',
  authors: [{ name: 'Site Author' }],
  items: [
    {
      id: '2026-11-22-hello',
      url: 'https://json.example.com/2026/11/22/hello',
      title: 'Hello, JSON',
      content_html: '<p>Hello <i>world</i></p>',
      summary: 'A first post',
      date_published: '2026-11-22T10:00:00-05:00',
      image: '/images/hello.jpg',
      authors: [{ name: 'Alex', url: 'https://json.example.com/alex' }],
    },
    {
      id: 12345,
      url: 'https://json.example.com/2026/11/23/text',
      content_text: 'Plain text with <angle> brackets & ampersands',
      date_modified: '2026-11-23T10:00:00Z',
      attachments: [{ url: 'https://json.example.com/a.mp3', mime_type: 'audio/mpeg' }, { url: 'https://json.example.com/a.webp', mime_type: 'image/webp' }],
    },
  ],
});
