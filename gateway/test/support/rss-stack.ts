import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { adminRequest, freePort, spawnReady, startService, type RunningProcess, type RunningService } from '@mailer/testing';
import { createAccount, startGateway, startStack, type GatewayHandle, type Stack } from './harness';
import { api, startUsageSources, type Api, type UsageSources } from './subscriber-stack';

/**
 * RSS newsletters end to end: a real nats-server; the real subscriber (topics), segment (segments),
 * messaging (sender profiles, the issues' mail; sending paused unless a test gives a relay), form (asked by messaging) and rss service processes wired to each other; a real
 * gateway. Feeds are served by `feeds`, a local HTTP server whose documents a test sets per path; the
 * rss service reads them through the outbound guard with the local runner's exceptions (http,
 * loopback); a document can answer late (`delayMs`). The form service's field usages are an
 * in-process double; rss and messaging answer the subscriber and segment services themselves.
 */
export interface RssStack {
  stack: Stack;
  rss: RunningProcess;
  gw: GatewayHandle;
  feeds: FeedServer;
  account(name: string): Promise<Api>;
  messaging: RunningProcess;
  /** SIGTERM (or kill -9) of the rss service, then a new process on the same data, ports and settings. */
  restartRss(opts?: { kill9?: boolean }): Promise<void>;
  /** The same for the messaging service (`downMs`: how long it stays down; `env`: settings changed from then on). */
  restartMessaging(opts?: { kill9?: boolean; downMs?: number; env?: NodeJS.ProcessEnv }): Promise<void>;
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
  const usage: UsageSources = await startUsageSources();
  const feeds = await startFeedServer();
  const started: Array<{ stop(): Promise<void> }> = [];
  const dirs: string[] = [];
  let messaging: RunningProcess | undefined;
  try {
    const [subscriberAddress, rssAddress, messagingAddress] = [`127.0.0.1:${await freePort()}`, `127.0.0.1:${await freePort()}`, `127.0.0.1:${await freePort()}`];
    // The segment and subscriber services ask rss and messaging what sends to a segment or topic before deleting it.
    const segment: RunningService = await startService('segment', { NATS_URL: stack.nats.url, SUBSCRIBER_GRPC_ADDR: subscriberAddress, RSS_GRPC_ADDR: rssAddress, MESSAGING_GRPC_ADDR: messagingAddress });
    started.push(segment);
    const subscriberDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-subscriber-'));
    dirs.push(subscriberDir);
    const subscriber = await spawnReady('services/subscriber/dist/main.js', {
      LOG_LEVEL: 'info',
      METRICS_PORT: '0',
      NATS_URL: stack.nats.url,
      DATA_DIR: subscriberDir,
      SUBSCRIBER_GRPC_ADDR: subscriberAddress,
      SEGMENT_GRPC_ADDR: segment.address,
      FORM_GRPC_ADDR: usage.addresses.form,
      RSS_GRPC_ADDR: rssAddress,
      MESSAGING_GRPC_ADDR: messagingAddress,
    });
    started.push(subscriber);
    // Messaging asks the form and rss services which forms / newsletters name a profile before deleting it.
    const form = await startService('form', { NATS_URL: stack.nats.url, SUBSCRIBER_GRPC_ADDR: subscriberAddress });
    started.push(form);
    const messagingDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-messaging-'));
    dirs.push(messagingDir);
    const messagingHttpAddr = `127.0.0.1:${await freePort()}`;
    const messagingEnv: NodeJS.ProcessEnv = {
      LOG_LEVEL: 'info',
      METRICS_PORT: '0',
      NATS_URL: stack.nats.url,
      DATA_DIR: messagingDir,
      MESSAGING_GRPC_ADDR: messagingAddress,
      MESSAGING_HTTP_ADDR: messagingHttpAddr,
      BOUNCE_SMTP_PORT: String(await freePort()),
      TRACKING_SECRET: crypto.randomBytes(32).toString('base64url'),
      RSS_GRPC_ADDR: rssAddress,
      SUBSCRIBER_GRPC_ADDR: subscriberAddress,
      SEGMENT_GRPC_ADDR: segment.address,
      FORM_GRPC_ADDR: form.address,
      PUBLIC_BASE_URL: 'https://mail.rss.test',
      MAIL_SEND_PAUSED: 'true',
      ...opts.messagingEnv,
    };
    messaging = await spawnReady('services/messaging/dist/main.js', messagingEnv);
    const rssDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-rss-'));
    dirs.push(rssDir);
    const rssEnv: NodeJS.ProcessEnv = {
      LOG_LEVEL: 'info',
      METRICS_PORT: '0',
      NATS_URL: stack.nats.url,
      DATA_DIR: rssDir,
      RSS_GRPC_ADDR: rssAddress,
      SUBSCRIBER_GRPC_ADDR: subscriberAddress,
      SEGMENT_GRPC_ADDR: segment.address,
      MESSAGING_GRPC_ADDR: messagingEnv.MESSAGING_GRPC_ADDR,
      OUTBOUND_ALLOW_HTTP: 'true',
      OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8',
      ...opts.rssEnv,
    };
    let rss = await spawnReady('services/rss/dist/main.js', rssEnv);
    const gw = await startGateway({
      NATS_URL: stack.nats.url,
      SUBSCRIBER_GRPC_ADDR: subscriberAddress,
      SEGMENT_GRPC_ADDR: segment.address,
      MESSAGING_GRPC_ADDR: messagingEnv.MESSAGING_GRPC_ADDR,
      MESSAGING_HTTP_ADDR: messagingHttpAddr,
      RSS_GRPC_ADDR: rssEnv.RSS_GRPC_ADDR,
      GATEWAY_UNAUTHENTICATED_PER_MINUTE: '100000',
    });
    return {
      stack,
      get rss() {
        return rss;
      },
      get messaging() {
        return messaging!;
      },
      gw,
      feeds,
      async account(name) {
        const { accountId, apiKey } = await createAccount(gw, name);
        await adminRequest(gw, 'PATCH', `/admin/accounts/${accountId}/rate-limits`, { perMinute: 1_000_000, perHour: 1_000_000 });
        return api(gw, apiKey, accountId);
      },
      async restartRss(o = {}) {
        if (o.kill9) await rss.kill9();
        else await rss.stop();
        rss = await spawnReady('services/rss/dist/main.js', rssEnv);
      },
      async restartMessaging(o = {}) {
        if (o.kill9) await messaging.kill9();
        else await messaging.stop();
        if (o.downMs) await new Promise((resolve) => setTimeout(resolve, o.downMs));
        Object.assign(messagingEnv, o.env);
        messaging = await spawnReady('services/messaging/dist/main.js', messagingEnv);
      },
      async stop() {
        await gw.stop();
        await rss.stop();
        await messaging.stop();
        for (const p of started.reverse()) await p.stop();
        await feeds.close();
        await usage.close();
        await stack.stop();
        for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
      },
    };
  } catch (err) {
    if (messaging) await messaging.stop().catch(() => undefined);
    for (const p of started.reverse()) await p.stop().catch(() => undefined);
    await feeds.close();
    await usage.close();
    await stack.stop();
    throw err;
  }
}
