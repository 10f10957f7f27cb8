import http from 'node:http';
import { startMesh, waitForSettled, type RunningService, type ServiceMesh } from '@mailer/testing';
import { startMeshGateway, startStack, type GatewayHandle, type Stack } from './harness';
import { newAccount, type Api } from './subscriber-stack';

/**
 * RSS newsletters end to end: a real nats-server; the real subscriber (topics), segment (segments),
 * messaging (sender profiles, the issues' mail; sending paused unless a test gives a relay), form
 * (asked by messaging and the subscriber service) and rss service processes wired to each other; a real
 * gateway. Feeds are served by `feeds`, a local HTTP server whose documents a test sets per path; the
 * rss service reads them through the outbound guard with the local runner's exceptions (http,
 * loopback); a document can answer late (`delayMs`).
 */
export interface RssStack {
  stack: Stack;
  mesh: ServiceMesh;
  rss: RunningService;
  gw: GatewayHandle;
  feeds: FeedServer;
  account(name: string): Promise<Api>;
  messaging: RunningService;
  /** SIGTERM (or kill -9) of the rss service, then a new process on the same data, ports and settings. */
  restartRss(opts?: { kill9?: boolean }): Promise<void>;
  /** The same for the messaging service (`downMs`: how long it stays down; `env`: settings changed from then on). */
  restartMessaging(opts?: { kill9?: boolean; downMs?: number; env?: NodeJS.ProcessEnv }): Promise<void>;
  /** The barrier before counting: JetStream consumers and the services' outboxes idle. */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

export interface FeedDocument {
  status?: number;
  contentType?: string;
  body: string;
  /** The answer starts this long after the request (a slow feed). */
  delayMs?: number;
}

export interface FeedServer {
  /** http://127.0.0.1:<port> */
  origin: string;
  set(path: string, doc: FeedDocument): void;
  /** Requests served per path. */
  hits(path: string): number;
  close(): Promise<void>;
}

export async function startFeedServer(): Promise<FeedServer> {
  const docs = new Map<string, FeedDocument>();
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const p = (req.url ?? '/').split('?')[0];
    hits.set(p, (hits.get(p) ?? 0) + 1);
    const doc = docs.get(p);
    if (!doc) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('no such feed');
      return;
    }
    const answer = () => res.writeHead(doc.status ?? 200, { 'content-type': doc.contentType ?? 'application/rss+xml; charset=utf-8' }).end(doc.body);
    if (doc.delayMs) setTimeout(answer, doc.delayMs).unref();
    else answer();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    origin: `http://127.0.0.1:${port}`,
    set: (p, doc) => docs.set(p, doc),
    hits: (p) => hits.get(p) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // a slow answer still due ends now
      }),
  };
}

/** An RSS 2.0 document of the given items (newest first as blogs write them). */
export function rss2(title: string, items: Array<{ guid: string; title: string; link?: string; date?: Date }>): string {
  const entries = items
    .map(
      (i) =>
        `<item><guid isPermaLink="false">${i.guid}</guid><title>${i.title}</title><link>${i.link ?? `https://blog.example/${i.guid}`}</link>` +
        `<pubDate>${(i.date ?? new Date()).toUTCString()}</pubDate><description>About ${i.title}</description></item>`,
    )
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>${title}</title><link>https://blog.example/</link><description>d</description>${entries}</channel></rss>`;
}

/**
 * `messagingEnv`: e.g. a capture relay as SMTP_URL with MAIL_SEND_PAUSED 'false', to read the mail
 * issues send (by default sending is paused: mail stays queued).
 */
export async function startRssStack(opts: { rssEnv?: NodeJS.ProcessEnv; messagingEnv?: NodeJS.ProcessEnv } = {}): Promise<RssStack> {
  const stack = await startStack(0);
  const feeds = await startFeedServer();
  let mesh: ServiceMesh;
  try {
    mesh = await startMesh({ NATS_URL: stack.nats.url }, ['subscriber', 'segment', 'form', 'messaging', 'rss'], {
      messaging: { PUBLIC_BASE_URL: 'https://mail.rss.test', MAIL_SEND_PAUSED: 'true', ...opts.messagingEnv },
      rss: { OUTBOUND_ALLOW_HTTP: 'true', OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8', ...opts.rssEnv },
    });
  } catch (err) {
    await feeds.close();
    await stack.stop();
    throw err;
  }
  const gw = await startMeshGateway(stack, mesh, {}, () => feeds.close());
  return {
    stack,
    mesh,
    get rss() {
      return mesh.get('rss');
    },
    get messaging() {
      return mesh.get('messaging');
    },
    gw,
    feeds,
    account: (name) => newAccount(gw, name),
    async restartRss(o = {}) {
      await mesh.restart('rss', o);
    },
    async restartMessaging(o = {}) {
      await mesh.restart('messaging', o);
    },
    settled: () => waitForSettled(stack.nc, { outboxes: mesh.outboxes() }),
    async stop() {
      await gw.stop();
      await mesh.stop();
      await feeds.close();
      await stack.stop();
    },
  };
}
