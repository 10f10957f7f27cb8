// The feed fetcher (clients/feed-fetcher.ts) against real HTTP servers on loopback, through the real
// outbound guard configured as the local runner configures it (http and loopback allowed): every
// format, conditional GETs, the 10 s / 5 MB / 3-redirect limits of the API contract "RSS newsletters", the guard
// re-checking every redirect, and each failure as the FeedError the newsletter's lastError shows.
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { createOutbound, type Outbound, type OutboundSettings } from '@mailer/outbound';
import { createFeedFetcher, FEED_USER_AGENT, type FeedFetch, type FetchedFeed } from '../src/clients/feed-fetcher';
import { FeedError } from '../src/domain/feed';
import { ATOM, JSON_FEED, RDF, RSS2 } from './support/feed-samples';
import { serve, startFeedServer, type FeedServer } from './support/feed-server';

const LOCAL: OutboundSettings = { allowHttp: true, allowedCidrs: ['127.0.0.0/8', '::1/128'] };
const MB = 1024 * 1024;

let server: FeedServer;
const clients: Outbound[] = [];
const guard = (settings: OutboundSettings = LOCAL, opts: Parameters<typeof createOutbound>[1] = {}) => {
  const c = createOutbound(settings, opts);
  clients.push(c);
  return c;
};
beforeEach(async () => {
  server = await startFeedServer();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server.close();
});

const feedOf = (r: FeedFetch): FetchedFeed => {
  if (r.kind !== 'feed') throw new Error(`expected a feed, got ${r.kind}`);
  return r;
};
const failure = async (p: Promise<unknown>): Promise<FeedError> => {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(FeedError);
    expect((err as Error).message).not.toMatch(/127\.0\.0\.1|::1|localhost|at .*\.ts/); // customer-facing
    return err as FeedError;
  }
  throw new Error('expected the fetch to fail');
};

describe('formats over HTTP', () => {
  it.each([
    ['RSS 2.0', RSS2, 'application/rss+xml; charset=UTF-8', 4, 'Our new oven'],
    ['Atom', ATOM, 'application/atom+xml', 2, 'XHTML content'],
    ['RDF', RDF, 'application/rdf+xml', 2, 'Open hardware grows'],
    ['JSON Feed', JSON_FEED, 'application/feed+json', 2, null],
  ])('%s', async (_name, body, type, count, firstTitle) => {
    server.route('/feed', serve(body, type));
    const got = feedOf(await createFeedFetcher(guard()).fetch(`${server.origin}/feed`));
    expect(got.feed.items).toHaveLength(count);
    expect(got.feed.items[0].title).toBe(firstTitle);
    expect(got).toMatchObject({ etag: null, lastModified: null, url: `${server.origin}/feed` });
  });

  it('sends a User-Agent and an Accept for feeds, and resolves relative links against the URL read', async () => {
    server.route('/blog/feed', serve(ATOM.replace('href="/atom.xml"', 'href="atom.xml"'), 'application/atom+xml'));
    const got = feedOf(await createFeedFetcher(guard()).fetch(`${server.origin}/blog/feed`));
    expect(server.hits[0].headers['user-agent']).toBe(FEED_USER_AGENT);
    expect(server.hits[0].headers.accept).toMatch(/^application\/rss\+xml, application\/atom\+xml, application\/feed\+json/);
    expect(got.feed.items[1].link).toBe(`${server.origin}/posts/script-tags/`);
    expect(got.feed.feedUrl).toBe(`${server.origin}/blog/atom.xml`);
  });

  it('decodes the charset of Content-Type or of the XML declaration', async () => {
    const latin1 = Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><rss version="2.0"><channel><title>Caf\u00e9 cr\u00e8me</title><item><guid>1</guid><title>Gr\u00fc\u00dfe</title></item></channel></rss>', 'latin1');
    server.route('/declared', serve(latin1, 'application/xml'));
    server.route('/header', serve(latin1, 'text/xml; charset=iso-8859-1'));
    const fetcher = createFeedFetcher(guard());
    for (const path of ['/declared', '/header']) {
      const got = feedOf(await fetcher.fetch(`${server.origin}${path}`));
      expect([got.feed.title, got.feed.items[0].title]).toEqual(['Caf\u00e9 cr\u00e8me', 'Gr\u00fc\u00dfe']);
    }
  });

  it('reads gzip, deflate and br; a corrupt or unknown encoding is feed_unreadable, one that inflates beyond the limit feed_too_large', async () => {
    server.route('/gz', serve(gzipSync(RSS2), 'application/rss+xml', { 'content-encoding': 'gzip' }));
    server.route('/bomb', serve(gzipSync(Buffer.alloc(6 * MB, 0x20)), 'application/rss+xml', { 'content-encoding': 'gzip' }));
    server.route('/br', serve(brotliCompressSync(RSS2), 'application/rss+xml', { 'content-encoding': 'br' }));
    server.route('/deflate', serve(deflateSync(RSS2), 'application/rss+xml', { 'content-encoding': 'deflate' }));
    server.route('/corrupt', serve(Buffer.from('not gzip at all'), 'application/rss+xml', { 'content-encoding': 'gzip' }));
    server.route('/zstd', serve(Buffer.from('whatever'), 'application/rss+xml', { 'content-encoding': 'zstd' }));
    const fetcher = createFeedFetcher(guard());
    for (const path of ['/br', '/deflate']) expect(feedOf(await fetcher.fetch(`${server.origin}${path}`)).feed.items).toHaveLength(4);
    expect((await failure(fetcher.fetch(`${server.origin}/corrupt`))).message).toBe("the feed's gzip compression is corrupt");
    expect((await failure(fetcher.fetch(`${server.origin}/zstd`))).message).toBe('the feed is sent with an unsupported Content-Encoding (zstd)');
    server.hits.length = 0;
    expect(feedOf(await fetcher.fetch(`${server.origin}/gz`)).feed.items).toHaveLength(4);
    expect(server.hits[0].headers['accept-encoding']).toBe('gzip, deflate, br');
    const err = await failure(fetcher.fetch(`${server.origin}/bomb`));
    expect([err.code, err.message]).toEqual(['feed_too_large', 'the feed is larger than 5 MB']);
  });

  it('broken XML is feed_unreadable with what is wrong', async () => {
    server.route('/broken', serve(RSS2.slice(0, 900), 'application/rss+xml'));
    const err = await failure(createFeedFetcher(guard()).fetch(`${server.origin}/broken`));
    expect(err.code).toBe('feed_unreadable');
    expect(err.message).toMatch(/^the feed is not well-formed XML: .*\(line \d+, column \d+\)$/);
  });
});

describe('conditional GET', () => {
  it('returns ETag and Last-Modified, sends them back, and a 304 is not_modified', async () => {
    const etag = '"v1-abc"';
    const lastModified = 'Tue, 24 Nov 2026 08:15:02 GMT';
    server.route('/feed', (req, res) => {
      if (req.headers['if-none-match'] === etag || req.headers['if-modified-since'] === lastModified) return res.writeHead(304, { etag }).end();
      res.writeHead(200, { 'content-type': 'application/rss+xml', etag, 'last-modified': lastModified }).end(RSS2);
    });
    const fetcher = createFeedFetcher(guard());
    const first = feedOf(await fetcher.fetch(`${server.origin}/feed`));
    expect([first.etag, first.lastModified]).toEqual([etag, lastModified]);
    expect(server.hits[0].headers['if-none-match']).toBeUndefined();

    expect(await fetcher.fetch(`${server.origin}/feed`, { etag: first.etag, lastModified: first.lastModified })).toEqual({ kind: 'not_modified' });
    expect(server.hits[1].headers).toMatchObject({ 'if-none-match': etag, 'if-modified-since': lastModified });

    // Last-Modified alone (a server without ETags)
    expect(await fetcher.fetch(`${server.origin}/feed`, { etag: null, lastModified })).toEqual({ kind: 'not_modified' });
    expect(server.hits[2].headers['if-none-match']).toBeUndefined();
    expect(server.hits[2].headers['if-modified-since']).toBe(lastModified);
    // ETag alone
    expect(await fetcher.fetch(`${server.origin}/feed`, { etag })).toEqual({ kind: 'not_modified' });
    // a changed feed answers 200 to the same conditional request
    expect(feedOf(await fetcher.fetch(`${server.origin}/feed`, { etag: '"v0"', lastModified: 'Mon, 23 Nov 2026 00:00:00 GMT' })).feed.items).toHaveLength(4);
  });

  it('a 304 to an unconditional request is an HTTP error, not "nothing new"', async () => {
    server.route('/feed', (_req, res) => res.writeHead(304).end());
    const err = await failure(createFeedFetcher(guard()).fetch(`${server.origin}/feed`));
    expect(err.code).toBe('feed_http_error');
  });
});

describe('HTTP errors', () => {
  it.each([
    [404, 'the feed answered HTTP 404 (Not Found)'],
    [500, 'the feed answered HTTP 500 (Internal Server Error)'],
    [410, 'the feed answered HTTP 410 (Gone)'],
    [429, 'the feed answered HTTP 429 (Too Many Requests)'],
  ])('%i -> feed_http_error with the status', async (status, message) => {
    server.route('/feed', (_req, res) => res.writeHead(status, { 'content-type': 'text/html' }).end('<h1>nope</h1>'));
    const err = await failure(createFeedFetcher(guard()).fetch(`${server.origin}/feed`));
    expect([err.code, err.message]).toEqual(['feed_http_error', message]);
  });

  it('a closed port is feed_unreachable, an unknown host name too', async () => {
    const port = server.port;
    await server.close();
    const refused = await failure(createFeedFetcher(guard()).fetch(`http://127.0.0.1:${port}/feed`));
    expect([refused.code, refused.message]).toEqual(['feed_unreachable', "the feed's server refused the connection"]);
    const nxdomain = guard(LOCAL, { lookup: (_h, _o, cb) => cb(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }), []) });
    const dns = await failure(createFeedFetcher(nxdomain).fetch('http://feeds.example.invalid/feed'));
    expect([dns.code, dns.message]).toEqual(['feed_unreachable', "the feed's host name could not be resolved"]);
    server = await startFeedServer(); // for afterEach
  });
});

describe('size limit: 5 MB, never read in full', () => {
  /** Streams `total` bytes (Infinity: until the client goes away) in 64 KiB chunks, honouring backpressure. */
  const stream = (total: number, headers: Record<string, string>) => {
    const state = { written: 0, closed: false };
    server.route('/huge', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/rss+xml', ...headers });
      res.on('close', () => (state.closed = true));
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = () => {
        while (!state.closed && state.written < total) {
          state.written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        if (!state.closed) res.end();
      };
      res.write('<?xml version="1.0"?><rss version="2.0"><channel><title>');
      pump();
    });
    return state;
  };

  it('a declared Content-Length over 5 MB fails at once, before the body', async () => {
    const state = stream(200 * MB, { 'content-length': String(200 * MB) });
    const err = await failure(createFeedFetcher(guard()).fetch(`${server.origin}/huge`));
    expect([err.code, err.message]).toEqual(['feed_too_large', 'the feed is larger than 5 MB']);
    await waitFor(() => state.closed);
    expect(state.written).toBeLessThan(20 * MB); // socket buffers at most, not the 200 MB
  });

  it('a body without Content-Length, streamed without end, fails once 5 MB arrived and the connection is dropped', async () => {
    const state = stream(Number.POSITIVE_INFINITY, {});
    const err = await failure(createFeedFetcher(guard()).fetch(`${server.origin}/huge`));
    expect(err.code).toBe('feed_too_large');
    await waitFor(() => state.closed);
    expect(state.written).toBeGreaterThan(5 * MB);
    expect(state.written).toBeLessThan(20 * MB);
  });

  it('a feed just under the limit is read', async () => {
    const items = Array.from({ length: 2000 }, (_, i) => `<item><guid>g${i}</guid><title>Item ${i}</title><description>${'lorem ipsum '.repeat(180)}</description></item>`).join('');
    const body = `<?xml version="1.0"?><rss version="2.0"><channel><title>Big</title>${items}</channel></rss>`;
    expect(body.length).toBeGreaterThan(4 * MB);
    expect(body.length).toBeLessThan(5 * MB);
    server.route('/big', serve(body, 'application/rss+xml'));
    expect(feedOf(await createFeedFetcher(guard()).fetch(`${server.origin}/big`)).feed.items).toHaveLength(2000);
  });
});

describe('time limit', () => {
  it('no answer -> feed_timeout at the limit', async () => {
    server.route('/slow', () => undefined); // never answers
    const started = Date.now();
    const err = await failure(createFeedFetcher(guard(), { timeoutMs: 300 }).fetch(`${server.origin}/slow`));
    expect([err.code, err.message]).toEqual(['feed_timeout', 'the feed did not answer completely within 300 ms']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('headers at once but a body that trickles counts too', async () => {
    server.route('/drip', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/rss+xml' });
      res.write('<rss version="2.0"><channel>');
      const t = setInterval(() => (res.destroyed ? clearInterval(t) : res.write('<!-- still here -->')), 50);
      res.on('close', () => clearInterval(t));
    });
    const err = await failure(createFeedFetcher(guard(), { timeoutMs: 400 }).fetch(`${server.origin}/drip`));
    expect(err.code).toBe('feed_timeout');
  });

  it('the limit covers the whole fetch, redirects included', async () => {
    for (const [from, to] of [['/a', '/b'], ['/b', '/c'], ['/c', '/feed']]) server.route(from, (_req, res) => setTimeout(() => res.writeHead(302, { location: to }).end(), 150));
    server.route('/feed', serve(RSS2, 'application/rss+xml'));
    expect((await failure(createFeedFetcher(guard(), { timeoutMs: 350 }).fetch(`${server.origin}/a`))).code).toBe('feed_timeout');
    expect(feedOf(await createFeedFetcher(guard(), { timeoutMs: 2000 }).fetch(`${server.origin}/a`)).url).toBe(`${server.origin}/feed`);
  });
});

describe('redirects: at most 3, each re-checked by the guard', () => {
  const chain = (length: number, status = 301) => {
    for (let i = length; i > 0; i--) server.route(`/r${i}`, (_req, res) => res.writeHead(status, { location: i === 1 ? '/feed.xml' : `/r${i - 1}` }).end());
    server.route('/feed.xml', serve(RSS2, 'application/rss+xml', { etag: '"final"' }));
  };

  it('3 redirects (relative Locations, every redirect status) are followed to the final URL', async () => {
    server.route('/r3', (_req, res) => res.writeHead(308, { location: `${server.origin}/r2` }).end()); // absolute
    server.route('/r2', (_req, res) => res.writeHead(307, { location: 'r1?x=1' }).end()); // relative to /r2
    server.route('/r1', (_req, res) => res.writeHead(302, { location: '/feed.xml' }).end());
    server.route('/feed.xml', serve(RSS2, 'application/rss+xml', { etag: '"final"' }));
    const got = feedOf(await createFeedFetcher(guard()).fetch(`${server.origin}/r3`));
    expect([got.url, got.etag, got.feed.items.length]).toEqual([`${server.origin}/feed.xml`, '"final"', 4]);
    expect(server.hits.map((h) => h.path)).toEqual(['/r3', '/r2', '/r1?x=1', '/feed.xml']);
    expect(server.hits.every((h) => h.headers['user-agent'] === FEED_USER_AGENT)).toBe(true);
  });

  it('4 redirects -> feed_too_many_redirects; the 4th target is never requested', async () => {
    chain(4, 302);
    const err = await failure(createFeedFetcher(guard()).fetch(`${server.origin}/r4`));
    expect([err.code, err.message]).toEqual(['feed_too_many_redirects', 'the feed redirected more than 3 times']);
    expect(server.hits.map((h) => h.path)).toEqual(['/r4', '/r3', '/r2', '/r1']);
  });

  it('a redirect loop ends as too many redirects', async () => {
    server.route('/loop', (_req, res) => res.writeHead(301, { location: '/loop' }).end());
    expect((await failure(createFeedFetcher(guard()).fetch(`${server.origin}/loop`))).code).toBe('feed_too_many_redirects');
    expect(server.hits).toHaveLength(4);
  });

  it('a redirect to a refused address -> feed_not_allowed, never requested', async () => {
    // the guard allows this loopback address only; the feed redirects to the metadata endpoint,
    // to another loopback address, to a private name, to a non-http scheme
    const onlyThis: OutboundSettings = { allowHttp: true, allowedCidrs: ['127.0.0.1/32'] };
    const privateName = guard(onlyThis, { lookup: (host, _o, cb) => cb(null, [{ address: host === 'intranet.example.com' ? '10.1.2.3' : '127.0.0.1', family: 4 }]) });
    const targets = ['http://169.254.169.254/latest/meta-data/', `http://127.0.0.2:${server.port}/feed`, `http://intranet.example.com:${server.port}/feed`, 'file:///etc/passwd', `http://user:secret@127.0.0.1:${server.port}/feed`];
    for (const [i, target] of targets.entries()) server.route(`/to${i}`, (_req, res) => res.writeHead(302, { location: target }).end());
    const fetcher = createFeedFetcher(privateName);
    for (const i of targets.keys()) {
      const err = await failure(fetcher.fetch(`${server.origin}/to${i}`));
      expect(err.code).toBe('feed_not_allowed');
      expect(err.message).toMatch(/^the feed redirected to a URL that is not allowed: /);
      expect(err.message).not.toContain('secret');
    }
    expect(server.hits.map((h) => h.path)).toEqual(targets.map((_, i) => `/to${i}`)); // no request reached a target
  });

  it('the first URL goes through the guard too: the production guard refuses http and loopback', async () => {
    server.route('/feed', serve(RSS2, 'application/rss+xml'));
    const production = createFeedFetcher(guard({ allowHttp: false, allowedCidrs: [] }));
    const http = await failure(production.fetch(`${server.origin}/feed`));
    expect([http.code, http.message]).toEqual(['feed_not_allowed', 'the feed URL is not allowed: the URL must use https']);
    const loopback = await failure(createFeedFetcher(guard({ allowHttp: true, allowedCidrs: [] })).fetch(`http://localhost:${server.port}/feed`));
    expect(loopback.code).toBe('feed_not_allowed');
    expect(server.hits).toEqual([]);
  });

  it('a redirect without Location is an HTTP error', async () => {
    server.route('/moved', (_req, res) => res.writeHead(301).end());
    const err = await failure(createFeedFetcher(guard()).fetch(`${server.origin}/moved`));
    expect([err.code, err.message]).toEqual(['feed_http_error', 'the feed answered HTTP 301 (a redirect) without a Location to follow']);
  });
});

async function waitFor(check: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
