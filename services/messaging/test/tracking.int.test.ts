import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, type NatsConnection } from 'nats';
import pino from 'pino';
import { contentSecurityPolicy, createMetrics, startHttpListener, type HttpListener } from '@mailer/kit';
import { ensureStreams, startOutboxRelay, type OutboxRelay } from '@mailer/nats';
import { openStore, type Store } from '@mailer/store';
import { startCaptureRelay, startNatsServer, type CaptureRelay, type NatsServerHandle } from '@mailer/testing';
import { eventsOf, type DomainEventJson } from '@mailer/testing/subscriber';
import { publicLinks } from '../src/readers/app/public-links';
import { smtpTransport, type MailTransport } from '../src/clients/smtp-transport';
import { subscriberClient } from '../src/clients/subscribers';
import { STYLESHEET } from '../src/readers/http/html';
import { PIXEL, publicPages } from '../src/readers/http/pages';
import { messageCollections, messagesOf, type EmailMessageDoc } from '../src/mail/store/messages';
import { useCases } from './support/use-cases';
import { outboxRepository } from '@mailer/nats';

// The open pixel and click redirect as a reader's mail client meets them: the messaging service's
// HTTP app served by the kit's listener, on a real embedded store whose outbox a real relay publishes
// to a real nats-server, with tokens signed by the service's own publicLinks. The messages are
// accepted and delivered (to a capture relay) by the service's own use cases on that store. (The
// gateway in front is covered in gateway/test/public-web.int.test.ts.)

const READER_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
const WINDOW_MS = 2_000;
const settings = {
  PUBLIC_BASE_URL: 'https://mail.example.test',
  BOUNCE_DOMAIN: 'bounces.example.test',
  TRACKING_SECRET: crypto.randomBytes(32).toString('base64url'),
  TRACKING_SECRET_PREVIOUS: [],
};
const links = publicLinks(settings);

let nats: NatsServerHandle;
let nc: NatsConnection;
let smtp: CaptureRelay;
let transport: MailTransport;
let store: Store;
let relay: OutboxRelay;
let listener: HttpListener;
let base: string;
let dataDir: string;
const subscribers = subscriberClient('127.0.0.1:1'); // the /t routes never call it

beforeAll(async () => {
  nats = await startNatsServer();
  nc = await connect({ servers: nats.url, ...nats.auth });
  await ensureStreams(nc);
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-tracking-'));
  store = await openStore({ dataDir });
  relay = startOutboxRelay({ store, js: nc.jetstream(), intervalMs: 50 });
  smtp = await startCaptureRelay();
  transport = smtpTransport({ SMTP_URL: smtp.url, SMTP_POOL_SIZE: 1 });
  const app = publicPages({
    store,
    messages: messageCollections(store),
    outbox: outboxRepository(store),
    links,
    subscribers,
    machineWindowMs: WINDOW_MS,
    notifyOutbox: relay.notify,
    now: () => new Date(),
    logger: pino({ level: 'silent' }),
  });
  listener = await startHttpListener({
    address: '127.0.0.1:0',
    app,
    logger: pino({ level: 'silent' }),
    metrics: createMetrics('messaging-test'),
    contentSecurityPolicy: contentSecurityPolicy({ inlineStyles: [STYLESHEET] }),
  });
  base = `http://127.0.0.1:${listener.port}`;
}, 60_000);

afterAll(async () => {
  await listener?.close(1_000);
  await relay?.stop();
  transport?.close();
  await smtp?.close();
  await store?.close();
  subscribers.close();
  await nc?.close();
  await nats?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

/**
 * A message of a new account, accepted (template `welcome` with two links, to ann@example.org) and
 * delivered by the use cases, at `deliveredAt` (by default a minute ago: a reader's open is human).
 */
async function deliveredMessage(deliveredAt = new Date(Date.now() - 60_000)): Promise<EmailMessageDoc> {
  const uc = useCases({ store, links, transport, now: () => deliveredAt, notify: relay.notify });
  const accountId = await uc.account({ html: '<a href="https://shop.example.com/a?x=1&amp;y=2">a</a> <a href="http://example.org/b#frag">b</a>' });
  const messageId = await uc.send(accountId, { eventProperties: { orderId: 'o-1' } });
  expect(await uc.deliver(accountId, messageId)).toEqual({ outcome: 'DELIVERED' });
  return (await messagesOf(messageCollections(store), accountId).get(messageId))!;
}

/** The account's email.opened / email.clicked facts on DOMAIN (its email.sent / email.delivered left out), once `count` are there. */
async function engagementFacts(accountId: string, count: number): Promise<DomainEventJson[]> {
  const engagement = (es: DomainEventJson[]) => es.filter((e) => e.type === 'email.opened' || e.type === 'email.clicked');
  return engagement(await eventsOf(nc, accountId, (es) => engagement(es).length >= count));
}

const stored = (m: EmailMessageDoc) => messagesOf(messageCollections(store), m.accountId).get(m._id) as Promise<EmailMessageDoc>;
const pathOf = (url: string) => new URL(url).pathname;
const get = (p: string, headers: Record<string, string> = {}) => fetch(`${base}${p}`, { headers: { 'user-agent': READER_UA, ...headers }, redirect: 'manual' });

describe('GET /t/o/{token} (open pixel)', () => {
  it('answers a 1x1 GIF that no cache keeps, counts a reader\'s open and publishes email.opened', async () => {
    const m = await deliveredMessage();
    const res = await get(pathOf(links.openUrl(m.accountId, m._id)));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/gif');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(Buffer.from(await res.arrayBuffer())).toEqual(PIXEL);
    const after = await stored(m);
    expect(after).toMatchObject({ openCount: 1, machineOpenCount: 0 });
    expect(after.firstOpenedAt).toBeInstanceOf(Date);

    const facts = await engagementFacts(m.accountId, 1);
    expect(facts).toEqual([
      expect.objectContaining({
        type: 'email.opened',
        messageId: m._id,
        email: 'ann@example.org',
        subscriberId: m.subscriberId,
        kind: 'TRANSACTIONAL',
        templateName: 'welcome',
        eventProperties: { orderId: 'o-1' },
        machine: false,
        occurredAt: after.firstOpenedAt!.toISOString(),
      }),
    ]);
  });

  it('counts machine opens apart: within the window after delivery, Apple\'s privacy proxy, a link scanner, no user agent', async () => {
    const cases: Array<[Date | undefined, Record<string, string>]> = [
      [new Date(), {}], // fetched as the relay accepted it
      [undefined, { 'user-agent': 'Mozilla/5.0' }], // Apple Mail Privacy Protection's bare agent
      [undefined, { 'x-forwarded-for': '17.58.1.2' }], // Apple's network, as the gateway forwards the reader's address
      [undefined, { 'user-agent': 'Mozilla/5.0 (compatible; BingPreview/1.0b)' }],
      [undefined, { 'user-agent': '' }],
    ];
    for (const [deliveredAt, headers] of cases) {
      const m = await deliveredMessage(deliveredAt);
      const res = await get(pathOf(links.openUrl(m.accountId, m._id)), headers);
      expect(res.status).toBe(200);
      const after = await stored(m);
      expect([headers, after.openCount, after.machineOpenCount, after.firstOpenedAt]).toEqual([headers, 0, 1, null]);
      const facts = await engagementFacts(m.accountId, 1);
      expect(facts.map((f) => [f.type, f.machine])).toEqual([['email.opened', true]]);
    }
  });

  it('counts a HEAD probe of the pixel or a link as a machine event (link checkers send HEAD, readers never do)', async () => {
    const m = await deliveredMessage();
    const head = (p: string) => fetch(`${base}${p}`, { method: 'HEAD', headers: { 'user-agent': READER_UA }, redirect: 'manual' });
    expect((await head(pathOf(links.openUrl(m.accountId, m._id)))).status).toBe(200);
    expect((await head(pathOf(links.clickUrl(m.accountId, m._id, 0)))).status).toBe(302);
    expect(await stored(m)).toMatchObject({ openCount: 0, machineOpenCount: 1, clickCount: 0, machineClickCount: 1 });
  });

  it('counts every one of many simultaneous opens exactly once', async () => {
    const m = await deliveredMessage();
    const url = pathOf(links.openUrl(m.accountId, m._id));
    const answers = await Promise.all(Array.from({ length: 40 }, () => get(url).then((r) => r.status)));
    expect(answers).toEqual(Array(40).fill(200));
    const after = await stored(m);
    expect(after.openCount).toBe(40);
    const facts = await engagementFacts(m.accountId, 40);
    expect(facts).toHaveLength(40);
  }, 60_000);

  it('answers 404 with a plain page for a forged, edited, truncated or foreign token, and counts nothing', async () => {
    const m = await deliveredMessage();
    const token = pathOf(links.openUrl(m.accountId, m._id)).slice('/t/o/'.length);
    const edited = token.slice(0, 5) + (token[5] === 'A' ? 'B' : 'A') + token.slice(6);
    const otherSecret = publicLinks({ ...settings, TRACKING_SECRET: crypto.randomBytes(32).toString('base64url') });
    const paths = [
      `/t/o/${edited}`,
      `/t/o/${token.slice(0, -3)}`,
      `/t/o/${pathOf(otherSecret.openUrl(m.accountId, m._id)).slice(5)}`, // signed with another secret
      `/t/o/${pathOf(links.clickUrl(m.accountId, m._id, 0)).slice(5)}`, // a click token is no open token
      `/t/o/${pathOf(links.openUrl(m.accountId, crypto.randomUUID())).slice(5)}`, // no such message
      `/t/o/${pathOf(links.openUrl(crypto.randomUUID(), m._id)).slice(5)}`, // another account's message id
      `/t/o/${'A'.repeat(2000)}`,
    ];
    for (const p of paths) {
      const res = await get(p);
      expect([p, res.status, res.headers.get('content-type')]).toEqual([p, 404, 'text/html; charset=utf-8']);
      expect(await res.text()).toContain('Not found');
    }
    expect(await stored(m)).toMatchObject({ openCount: 0, machineOpenCount: 0 });
  });
});

describe('GET /t/c/{token} (click redirect)', () => {
  it('redirects to that link of that message, counts the click and the open it implies, and publishes both facts', async () => {
    const m = await deliveredMessage();
    const res = await get(pathOf(links.clickUrl(m.accountId, m._id, 0)));
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('https://shop.example.com/a?x=1&y=2');
    const second = await get(pathOf(links.clickUrl(m.accountId, m._id, 1)));
    expect(second.headers.get('location')).toBe('http://example.org/b#frag');

    const after = await stored(m);
    // Two clicks; the first one also stood for the open nobody saw (images off); the second did not.
    expect(after).toMatchObject({ clickCount: 2, openCount: 1, machineClickCount: 0 });
    expect(after.firstClickedAt).toEqual(after.firstOpenedAt);
    const facts = await engagementFacts(m.accountId, 3);
    expect(facts.map((f) => [f.type, f.machine, f.url])).toEqual([
      ['email.opened', false, undefined],
      ['email.clicked', false, 'https://shop.example.com/a?x=1&y=2'],
      ['email.clicked', false, 'http://example.org/b#frag'],
    ]);
  });

  it('does not imply an open for a machine click, nor a second one after a real open', async () => {
    const scanned = await deliveredMessage();
    await get(pathOf(links.clickUrl(scanned.accountId, scanned._id, 0)), { 'user-agent': 'Mimecast URL Protection' });
    expect(await stored(scanned)).toMatchObject({ clickCount: 0, machineClickCount: 1, openCount: 0, firstClickedAt: null, firstOpenedAt: null });

    const opened = await deliveredMessage();
    await get(pathOf(links.openUrl(opened.accountId, opened._id)));
    await get(pathOf(links.clickUrl(opened.accountId, opened._id, 0)));
    expect(await stored(opened)).toMatchObject({ clickCount: 1, openCount: 1 });
  });

  it('never redirects elsewhere: an index the message does not have, an edited token or a non-web link is 404', async () => {
    const m = await deliveredMessage();
    // Defence in depth: a record no sending path writes (instrumentation keeps http(s) links only),
    // tampered in the store to hold a javascript: link at index 1.
    await messageCollections(store).messages.updateOne({ _id: m._id }, { $set: { links: ['https://ok.example.com/', 'javascript:alert(1)'] } });
    const token = pathOf(links.clickUrl(m.accountId, m._id, 0)).slice('/t/c/'.length);
    const paths = [
      pathOf(links.clickUrl(m.accountId, m._id, 2)), // out of range (signed, but the message has 2 links)
      pathOf(links.clickUrl(m.accountId, m._id, 1)), // not an http(s) URL
      `/t/c/${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`,
      `/t/c/${pathOf(links.openUrl(m.accountId, m._id)).slice(5)}`,
      `/t/c/${token}?url=https://evil.example`, // the query is not a redirect target either
    ];
    for (const p of paths.slice(0, 4)) {
      const res = await get(p);
      expect([p, res.status, res.headers.get('location')]).toEqual([p, 404, null]);
    }
    const withQuery = await get(paths[4]);
    expect(withQuery.headers.get('location')).toBe('https://ok.example.com/');
    expect(await stored(m)).toMatchObject({ clickCount: 1, machineClickCount: 0 });
  });
});
