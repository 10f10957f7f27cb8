// The broadcast send (app/broadcast-send.ts) step by step on a real embedded store, with the
// audience as the subscriber service would answer it (a scripted BroadcastAudience) and a fixed
// clock: every reader recorded once page by page with the reconciliation adding up after every
// write (the page steps and every later change of a message's status), a failed page resumed at its
// cursor, send windows and the re-check of waiting readers, the A/B decision at its time by human
// clicks only, cancel, and FAILED after bounded tries (an outage not counted).
import { randomUUID } from 'node:crypto';
import { fixedClock, PeerUnavailable } from '@mailer/kit';
import { OUTBOX_COLLECTION, outboxRepository, outboxSchema, type OutboxDoc } from '@mailer/nats';
import { openTempStore, type TempStore } from '@mailer/testing/store';
import type { AudienceReader, BroadcastDeps } from '../src/audiences/app/broadcast-ports';
import { sendBroadcast } from '../src/audiences/app/broadcast-send';
import { broadcastView, cancelBroadcast, createBroadcast, getBroadcast, listBroadcasts, scheduleBroadcast } from '../src/audiences/app/broadcasts';
import { createEmailTemplate } from '../src/templates/app/email-templates';
import { publicLinks } from '../src/readers/app/public-links';
import { domainPolicy } from '../src/templates/app/sending-domains';
import { createSenderProfile } from '../src/templates/app/sender-profiles';
import type { BroadcastRequest } from '../src/audiences/domain/broadcast';
import { recipientCollections, recipientsOf } from '../src/audiences/store/broadcast-recipients';
import { broadcastCollection, broadcastRepository, dueBroadcasts } from '../src/audiences/store/broadcasts';
import { emailTemplateCollection } from '../src/templates/store/email-templates';
import { messageCollections, messagesOf, type EmailMessageDoc } from '../src/mail/store/messages';
import { suppressionCollection, suppressionsOf } from '../src/readers/store/suppressions';

const A = '0193b6f0-0000-7000-8000-00000000000a';
const links = publicLinks({ PUBLIC_BASE_URL: 'https://mail.example.test', BOUNCE_DOMAIN: 'bounces.example.test', TRACKING_SECRET: 'x'.repeat(40), TRACKING_SECRET_PREVIOUS: [] });
const clock = fixedClock('2026-01-05T06:00:00.000Z');

let tmp: TempStore;
let deps: BroadcastDeps;
/** The account's subscribers as the subscriber service classifies them (id order is the map's sorted keys). */
let readers: Map<string, AudienceReader>;
let audienceFails: (() => Error) | null;

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const reader = (n: number, extra: Partial<AudienceReader> = {}): AudienceReader => ({ id: id(n), email: `r${n}@example.org`, firstName: `R${n}`, fields: {}, exclusion: null, ...extra });

beforeEach(async () => {
  tmp = await openTempStore('broadcast-send');
  clock.set('2026-01-05T06:00:00.000Z');
  readers = new Map();
  audienceFails = null;
  const domains = domainPolicy({ store: tmp.store, verification: 'off', keys: null, operatorKeys: {} });
  const sorted = () => [...readers.values()].sort((x, y) => (x.id < y.id ? -1 : 1));
  deps = {
    store: tmp.store,
    broadcasts: broadcastRepository(tmp.store),
    recipients: recipientCollections(tmp.store),
    messages: messageCollections(tmp.store),
    suppressions: suppressionCollection(tmp.store),
    outbox: outboxRepository(tmp.store),
    audience: {
      async readers(_accountId, q) {
        if (audienceFails) throw audienceFails();
        // Between two pages the reconciliation adds up (every page is one transaction).
        await expectBalanced();
        const page = sorted().filter((r) => r.id > q.after).slice(0, q.pageSize);
        return { readers: page, next: page.length < q.pageSize || page[page.length - 1].id === sorted()[sorted().length - 1].id ? '' : page[page.length - 1].id };
      },
      check: async (_accountId, q) => sorted().filter((r) => q.subscriberIds.includes(r.id)),
    },
    catalog: { segmentExists: async () => true, topicIds: async () => new Set<string>(), customFields: async () => [{ type: 'TEXT', personalizationTagName: 'tz', active: true }] },
    recipientLookup: { recipientByEmail: async () => null },
    links,
    domains,
    settings: { pageSize: 3, leaseMs: 60_000, retryMs: 1_000, maxAttempts: 2, minuteMs: 60_000 },
    now: clock.now,
    newId: randomUUID,
    notifyOutbox: () => undefined,
    awaitPublished: async () => true,
    wakeSend: () => undefined,
  };
  const catalog = { store: tmp.store, now: clock.now, newId: randomUUID, allowedFromDomains: [], domains };
  await createSenderProfile(catalog, A, { name: 'News', fromEmail: 'news@example.com', fromName: 'News' });
  await createEmailTemplate(catalog, A, { name: 'spring', subject: 'Spring for {{ subscriber.firstName }}', html: '<p>Hi</p><a href="https://shop.example/">shop</a>' });
});
afterEach(() => tmp.close());

const reconciliation = async (broadcastId?: string) => {
  const ids = broadcastId ? [broadcastId] : (await deps.broadcasts.page(A, undefined, 1, 100)).items.map((b) => b._id);
  return Promise.all(ids.map(async (b) => (await recipientsOf(deps.recipients, A).reconciliation(b)).reconciliation));
};
async function expectBalanced(): Promise<void> {
  for (const r of await reconciliation()) {
    const excluded = Object.values(r.excluded).reduce((x, y) => x + y, 0);
    const statuses = Object.values(r.status).reduce((x, y) => x + y, 0);
    expect([r.audience, r.recipients]).toEqual([r.recipients + excluded, statuses]);
  }
}

async function start(req: Partial<BroadcastRequest> = {}) {
  const b = await createBroadcast(deps, A, { name: 'Spring', templateName: 'spring', ...req });
  await scheduleBroadcast(deps, A, b._id);
  return b._id;
}
const messagesOfBroadcast = async (broadcastId: string): Promise<EmailMessageDoc[]> => deps.messages.messages.find({ accountId: A, broadcastId });
const outbox = () => tmp.store.collection<OutboxDoc>(OUTBOX_COLLECTION, outboxSchema).find({});

/** What the delivery worker records for a relay's 250 (SENT, then DELIVERED). */
async function deliver(messageId: string): Promise<void> {
  const repo = messagesOf(deps.messages, A);
  const token = randomUUID();
  const at = clock.now();
  await repo.claimForSending(messageId, { status: 'QUEUED', claimToken: null }, { token, job: 'seq:1', deliveryCount: 1, at });
  await tmp.store.transaction((tx) => repo.settleAttempt(messageId, token, { attempts: [], statuses: [{ status: 'SENT', at }, { status: 'DELIVERED', at }], set: { sentAt: at, deliveredAt: at } }, tx));
}

it('records every reader once, page by page, with the reconciliation adding up after every page and every status change', async () => {
  for (let n = 1; n <= 8; n++) readers.set(id(n), reader(n));
  readers.set(id(2), reader(2, { exclusion: 'NOT_ACTIVE' }));
  readers.set(id(6), reader(6, { exclusion: 'NOT_IN_SEGMENT' }));
  await suppressionsOf(deps.suppressions, A).add({ _id: randomUUID(), email: 'r7@example.org', reason: 'MANUAL', createdAt: clock.now(), messageId: null });
  const broadcastId = await start();
  await sendBroadcast(deps, A, broadcastId);
  const sent = await getBroadcast(deps, A, broadcastId);
  expect(sent).toMatchObject({ status: 'SENT', audienceDone: true, sendDueAt: null });
  const [r] = await reconciliation(broadcastId);
  expect(r).toMatchObject({ audience: 8, recipients: 5, excluded: { NOT_ACTIVE: 1, NOT_IN_SEGMENT: 1, SUPPRESSED: 1 }, status: { PENDING: 5 } });
  const mail = await messagesOfBroadcast(broadcastId);
  expect(mail.map((m) => m.subscriberId).sort()).toEqual([1, 3, 4, 5, 8].map(id));
  expect(mail[0]).toMatchObject({ kind: 'BROADCAST', broadcastId, audienceKey: `broadcast:${broadcastId}`, status: 'QUEUED' });
  const facts = (await outbox()).map((o) => o.subject);
  expect(facts.filter((s) => s.startsWith('jobs.email.')).length).toBe(5);
  expect(facts.filter((s) => s === 'domain.broadcast.sent').length).toBe(1);

  // Every later change of a message moves its recipient from one count to another.
  const repo = messagesOf(deps.messages, A);
  await deliver(mail[0]._id);
  await deliver(mail[1]._id);
  await tmp.store.transaction((tx) => repo.markBounced(mail[1]._id, { type: 'HARD', diagnosticCode: '5.1.1' }, clock.now(), tx));
  await tmp.store.transaction((tx) => repo.suppressBeforeSending(mail[2]._id, { status: 'QUEUED', claimToken: null }, 'MANUAL', clock.now(), tx));
  await expectBalanced();
  expect((await reconciliation(broadcastId))[0].status).toMatchObject({ PENDING: 2, DELIVERED: 1, BOUNCED: 1, SUPPRESSED: 1 });
  const rows = await recipientsOf(deps.recipients, A).page(broadcastId, {}, 1, 100);
  expect(Object.fromEntries(rows.items.map((x) => [x.subscriberId, x.status]))[mail[1].subscriberId!]).toBe('BOUNCED');
  // Sending again finds nothing to do: nobody is recorded or mailed twice.
  await sendBroadcast(deps, A, broadcastId);
  expect((await messagesOfBroadcast(broadcastId)).length).toBe(5);
});

it("the broadcast list answers each broadcast's reconciliation as reading it alone does; a draft's is all zeros", async () => {
  for (let n = 1; n <= 4; n++) readers.set(id(n), reader(n));
  readers.set(id(2), reader(2, { exclusion: 'NOT_ACTIVE' }));
  const sentId = await start();
  await sendBroadcast(deps, A, sentId);
  const draft = await createBroadcast(deps, A, { name: 'Draft', templateName: 'spring' });

  const { items, total } = await listBroadcasts(deps, A, { pageNumber: 1, pageSize: 10 });
  expect(total).toBe(2);
  const byId = new Map(items.map((v) => [v.broadcast._id, v.tally]));
  expect(byId.get(sentId)!.reconciliation).toMatchObject({ audience: 4, recipients: 3, excluded: { NOT_ACTIVE: 1 }, status: { PENDING: 3 } });
  expect(byId.get(draft._id)).toEqual({ reconciliation: { audience: 0, recipients: 0, excluded: expect.any(Object), status: expect.any(Object) }, variants: [] });
  expect(Object.values(byId.get(draft._id)!.reconciliation.status).every((n) => n === 0)).toBe(true);
  for (const v of items) expect(v.tally).toEqual((await broadcastView(deps, v.broadcast)).tally);
});

it('a page that fails resumes at its cursor; a service that does not answer is retried without counting as a failed try', async () => {
  for (let n = 1; n <= 7; n++) readers.set(id(n), reader(n));
  const broadcastId = await start();
  let calls = 0;
  const readersOf = deps.audience.readers;
  deps.audience.readers = async (accountId, q) => {
    if (++calls === 2) throw new PeerUnavailable('subscriber', 'service_unavailable', 'The subscriber service is unavailable; retry later.', { code: 'UNAVAILABLE', details: 'down' });
    return readersOf(accountId, q);
  };
  await sendBroadcast(deps, A, broadcastId);
  const stopped = await getBroadcast(deps, A, broadcastId);
  expect(stopped).toMatchObject({ status: 'SENDING', cursor: id(3), sendFailures: 0, lastError: expect.stringMatching(/^service_unavailable: /), sendDueAt: new Date(clock.now().getTime() + 1_000) });
  clock.advance(1_000);
  await sendBroadcast(deps, A, broadcastId);
  expect(await getBroadcast(deps, A, broadcastId)).toMatchObject({ status: 'SENT', lastError: null });
  expect((await messagesOfBroadcast(broadcastId)).map((m) => m.subscriberId).sort()).toEqual([1, 2, 3, 4, 5, 6, 7].map(id));
  expect((await reconciliation(broadcastId))[0]).toMatchObject({ audience: 7, recipients: 7 });
});

it("send windows: a reader inside the window now is mailed; the others wait until theirs opens and are checked against the rules again then", async () => {
  // 06:00 UTC: 07:00 in Berlin (before 09:00), 15:00 in Tokyo (inside 09-17).
  readers.set(id(1), reader(1, { fields: { tz: 'Asia/Tokyo' } }));
  readers.set(id(2), reader(2));
  readers.set(id(3), reader(3, { fields: { tz: 'no zone' } }));
  const broadcastId = await start({ sendWindow: { startHour: 9, endHour: 17, timeZoneField: 'tz', defaultTimeZone: 'Europe/Berlin' } });
  await sendBroadcast(deps, A, broadcastId);
  expect(await getBroadcast(deps, A, broadcastId)).toMatchObject({ status: 'SENDING', sendDueAt: new Date('2026-01-05T08:00:00Z') });
  expect((await messagesOfBroadcast(broadcastId)).map((m) => m.subscriberId)).toEqual([id(1)]);
  expect((await reconciliation(broadcastId))[0]).toMatchObject({ audience: 3, recipients: 3, status: { PENDING: 3 } });
  // Reader 3 unsubscribes while waiting.
  readers.set(id(3), reader(3, { exclusion: 'NOT_ACTIVE' }));
  clock.set('2026-01-05T07:59:00Z');
  await sendBroadcast(deps, A, broadcastId);
  expect((await messagesOfBroadcast(broadcastId)).length).toBe(1);
  clock.set('2026-01-05T08:00:00Z');
  await sendBroadcast(deps, A, broadcastId);
  expect((await getBroadcast(deps, A, broadcastId)).status).toBe('SENT');
  expect((await messagesOfBroadcast(broadcastId)).map((m) => m.subscriberId).sort()).toEqual([id(1), id(2)]);
  const [r] = await reconciliation(broadcastId);
  expect(r).toMatchObject({ audience: 3, recipients: 2, excluded: { NOT_ACTIVE: 1 }, status: { PENDING: 2 } });
  await expectBalanced();
});

it('A/B: the test group first, the winner at decideAfterMinutes by human clicks per delivered mail (machine clicks never count), the rest get it', async () => {
  for (let n = 1; n <= 40; n++) readers.set(id(n), reader(n));
  const broadcastId = await start({ abTest: { subjects: ['Subject A', 'Subject B'], testPercent: 50, decideAfterMinutes: 15, metric: 'HUMAN_CLICKS' } });
  await sendBroadcast(deps, A, broadcastId);
  const first = await messagesOfBroadcast(broadcastId);
  const [v0, v1] = [first.filter((m) => m.variant === 0), first.filter((m) => m.variant === 1)];
  expect(v0.length).toBeGreaterThan(0);
  expect(v1.length).toBeGreaterThan(0);
  expect(v0.every((m) => m.subject === 'Subject A') && v1.every((m) => m.subject === 'Subject B')).toBe(true);
  expect(await getBroadcast(deps, A, broadcastId)).toMatchObject({ status: 'SENDING', winner: null, sendDueAt: new Date('2026-01-05T06:15:00Z') });
  for (const m of first) await deliver(m._id);
  const repo = messagesOf(deps.messages, A);
  for (const m of v0) for (let i = 0; i < 5; i++) await tmp.store.transaction((tx) => repo.recordClick(m, true, clock.now(), tx));
  await tmp.store.transaction((tx) => repo.recordClick(v1[0], false, clock.now(), tx));
  clock.set('2026-01-05T06:14:59Z');
  await sendBroadcast(deps, A, broadcastId);
  expect((await getBroadcast(deps, A, broadcastId)).winner).toBeNull();
  clock.set('2026-01-05T06:15:00Z');
  await sendBroadcast(deps, A, broadcastId);
  expect(await getBroadcast(deps, A, broadcastId)).toMatchObject({ status: 'SENT', winner: 1 });
  const all = await messagesOfBroadcast(broadcastId);
  expect(all.length).toBe(40);
  expect(all.filter((m) => m.variant === 1).length).toBe(40 - v0.length);
  expect(all.filter((m) => m.subject === 'Subject A').length).toBe(v0.length);
  const { variants } = await recipientsOf(deps.recipients, A).reconciliation(broadcastId);
  expect(variants.map((v) => [v.recipients, v.delivered, v.humanClicks, v.humanOpens])).toEqual([[v0.length, v0.length, 0, 0], [40 - v0.length, v1.length, 1, 0]]);
});

it('cancel: readers whose mail waits get none and leave the reconciliation; queued mail stays', async () => {
  readers.set(id(1), reader(1, { fields: { tz: 'Asia/Tokyo' } }));
  readers.set(id(2), reader(2));
  readers.set(id(3), reader(3));
  const broadcastId = await start({ sendWindow: { startHour: 9, endHour: 17, timeZoneField: 'tz', defaultTimeZone: 'Europe/Berlin' } });
  await sendBroadcast(deps, A, broadcastId);
  await cancelBroadcast(deps, A, broadcastId);
  await expectBalanced();
  await sendBroadcast(deps, A, broadcastId);
  expect(await getBroadcast(deps, A, broadcastId)).toMatchObject({ status: 'CANCELLED', sendDueAt: null });
  expect((await reconciliation(broadcastId))[0]).toMatchObject({ audience: 1, recipients: 1, status: { PENDING: 1 } });
  expect((await messagesOfBroadcast(broadcastId)).length).toBe(1);
  clock.set('2026-01-05T09:00:00Z');
  await sendBroadcast(deps, A, broadcastId);
  expect((await messagesOfBroadcast(broadcastId)).length).toBe(1);
});

it('a cancel during a page: the page is not recorded, the lease is given back at once, nothing is mailed', async () => {
  for (let n = 1; n <= 5; n++) readers.set(id(n), reader(n));
  const broadcastId = await start();
  const readersOf = deps.audience.readers;
  deps.audience.readers = async (accountId, q) => {
    const page = await readersOf(accountId, q);
    await cancelBroadcast(deps, A, broadcastId);
    return page;
  };
  // As the send poller works it: claimed with a lease first.
  expect(await dueBroadcasts(broadcastCollection(tmp.store)).claim(clock.now(), 60_000, 10)).toEqual([{ _id: broadcastId, accountId: A }]);
  await sendBroadcast(deps, A, broadcastId);
  expect(await getBroadcast(deps, A, broadcastId)).toMatchObject({ status: 'CANCELLED', cursor: '', leaseUntil: null });
  expect(await messagesOfBroadcast(broadcastId)).toEqual([]);
  expect((await reconciliation(broadcastId))[0]).toMatchObject({ audience: 0, recipients: 0 });
});

it("a reader whose own mail cannot be rendered gets a FAILED message with the reason; the others' mail goes", async () => {
  const catalog = { store: tmp.store, now: clock.now, newId: randomUUID, allowedFromDomains: [], domains: deps.domains as never };
  await createEmailTemplate(catalog, A, { name: 'heavy', subject: 'Hi', html: '{% if subscriber.fields.big %}{% for i in (1..100000000) %}xxxxxxxxxxxxxxxx{% endfor %}{% endif %}<p>ok</p>' });
  readers.set(id(1), reader(1));
  readers.set(id(2), reader(2, { fields: { big: 'yes' } }));
  const broadcastId = await start({ templateName: 'heavy' });
  await sendBroadcast(deps, A, broadcastId);
  expect((await getBroadcast(deps, A, broadcastId)).status).toBe('SENT');
  const mail = new Map((await messagesOfBroadcast(broadcastId)).map((m) => [m.subscriberId, m]));
  expect(mail.get(id(1))).toMatchObject({ status: 'QUEUED' });
  expect(mail.get(id(2))).toMatchObject({ status: 'FAILED', attempts: [{ outcome: 'FAILED', response: expect.stringMatching(/^template_render_failed: /) }] });
  expect((await deps.messages.bodies.find({ _id: mail.get(id(2))!._id })).length).toBe(0);
  expect((await reconciliation(broadcastId))[0]).toMatchObject({ audience: 2, recipients: 2, status: { PENDING: 1, FAILED: 1 } });
  expect((await recipientsOf(deps.recipients, A).page(broadcastId, { status: 'FAILED' }, 1, 10)).items.map((r) => r.subscriberId)).toEqual([id(2)]);
});

it('FAILED with lastError after BROADCAST_SEND_MAX_ATTEMPTS failed tries in a row', async () => {
  readers.set(id(1), reader(1));
  const broadcastId = await start();
  // The template disappears under the send (the guard that refuses its delete is the API's, not the store's).
  await emailTemplateCollection(tmp.store).deleteMany({ accountId: A });
  await sendBroadcast(deps, A, broadcastId);
  expect(await getBroadcast(deps, A, broadcastId)).toMatchObject({ status: 'SENDING', sendFailures: 1, lastError: expect.stringMatching(/^template_not_found: /) });
  clock.advance(1_000);
  await sendBroadcast(deps, A, broadcastId);
  expect(await getBroadcast(deps, A, broadcastId)).toMatchObject({ status: 'FAILED', sendFailures: 2, lastError: expect.stringMatching(/^template_not_found: /), finishedAt: clock.now() });
});
