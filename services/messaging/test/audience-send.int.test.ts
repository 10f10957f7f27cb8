// Use case QueueAudiencePage (app/audience-send.ts), every branch, on a real embedded store with the
// real subscriber and segment services answering the audience pages. A page is all or nothing: a
// refusal, a peer that does not answer or a render that fails for one reader queues nobody of it; a
// page asked again queues nobody twice; suppressed readers are counted, never mailed.
import crypto from 'node:crypto';
import { createClient, PeerUnavailable } from '@mailer/kit';
import { OUTBOX_COLLECTION, outboxRepository, outboxSchema, type OutboxDoc } from '@mailer/nats';
import { subscriberV1 } from '@mailer/proto';
import { freePort, refusal, startMesh, startNatsServer, type NatsServerHandle, type ServiceMesh } from '@mailer/testing';
import { openTempStore, type TempStore } from '@mailer/testing/store';
import { addReq } from '@mailer/testing/subscriber';
import { queueAudiencePage, type AudienceContent, type AudiencePageInput, type AudienceSendDeps } from '../src/audiences/app/audience-send';
import { publicLinks } from '../src/readers/app/public-links';
import { createSenderProfile } from '../src/templates/app/sender-profiles';
import { domainPolicy } from '../src/templates/app/sending-domains';
import { audienceClient } from '../src/clients/audience';
import { messageCollections, messagesOf } from '../src/mail/store/messages';
import { suppressionCollection, suppressionsOf } from '../src/readers/store/suppressions';

jest.setTimeout(120_000);

let nats: NatsServerHandle;
let mesh: ServiceMesh;
let tmp: TempStore;
let audience: ReturnType<typeof audienceClient>;
let subscribers: ReturnType<typeof createClient<subscriberV1.SubscriberServiceClient>>;
const links = publicLinks({ PUBLIC_BASE_URL: 'https://mail.example.test', BOUNCE_DOMAIN: 'bounces.example.test', TRACKING_SECRET: 'x'.repeat(40), TRACKING_SECRET_PREVIOUS: [] });

beforeAll(async () => {
  nats = await startNatsServer();
  mesh = await startMesh({ NATS_URL: nats.url }, ['subscriber', 'segment']);
  audience = audienceClient(mesh.env.SUBSCRIBER_GRPC_ADDR);
  subscribers = createClient(subscriberV1.SubscriberServiceClient, mesh.env.SUBSCRIBER_GRPC_ADDR, 10_000);
});
afterAll(async () => {
  audience?.close();
  subscribers?.close();
  await mesh?.stop();
  await nats?.stop();
});
beforeEach(async () => {
  tmp = await openTempStore('audience-send');
});
afterEach(() => tmp.close());

function deps(over: Partial<AudienceSendDeps> = {}): AudienceSendDeps {
  return {
    store: tmp.store,
    messages: messageCollections(tmp.store),
    suppressions: suppressionCollection(tmp.store),
    outbox: outboxRepository(tmp.store),
    audience,
    links,
    domains: domainPolicy({ store: tmp.store, verification: 'off', keys: null, operatorKeys: {} }),
    now: () => new Date(),
    newId: crypto.randomUUID,
    notify: () => undefined,
    ...over,
  };
}

const catalog = () => ({ store: tmp.store, now: () => new Date(), newId: crypto.randomUUID, allowedFromDomains: [], domains: domainPolicy({ store: tmp.store, verification: 'off', keys: null, operatorKeys: {} }) });

/** A new account with a sender profile, a topic and `n` ACTIVE readers in it (their addresses in audience order). */
async function account(n: number) {
  const accountId = crypto.randomUUID();
  const profile = await createSenderProfile(catalog(), accountId, { name: 'Blog', fromEmail: 'blog@example.com', fromName: 'The Blog' });
  const topic = (await subscribers.addTopic({ accountId, label: 'Digest', enrollExistingSubscribers: false, isDefault: false })).topic!;
  for (let i = 0; i < n; i++) await subscribers.addSubscriber(addReq(accountId, `reader${i}@example.org`, { topicIds: [topic.id], topicIdsGiven: true, firstName: `Reader ${i}` }));
  return { accountId, profileId: profile._id, topicId: topic.id };
}

const content = (over: Partial<AudienceContent> = {}): AudienceContent => ({
  subject: '{{ newsletter.name }}: {{ items[0].title }}',
  html: '<p>Hi {{ subscriber.firstName }}</p>{% for item in items %}<a href="{{ item.link }}">{{ item.title }}</a>{% endfor %}',
  css: '',
  values: { newsletter: { name: 'Digest' }, items: [{ title: 'Post 1', link: 'https://blog.example/1' }] },
  ...over,
});

const page = (a: { accountId: string; profileId: string; topicId: string }, over: Partial<AudiencePageInput> = {}): AudiencePageInput => ({
  accountId: a.accountId,
  sendKey: 'rss-issue:i-1',
  kind: 'RSS',
  senderProfileId: a.profileId,
  content: content(),
  segmentId: null,
  topicId: a.topicId,
  after: '',
  pageSize: 2,
  ...over,
});

const queued = async (accountId: string) => (await messagesOf(messageCollections(tmp.store), accountId).list({ pageNumber: 1, pageSize: 100 })).items;
/** The delivery jobs waiting in the outbox (a page's jobs may be one document holding them together). */
const jobs = async () => (await tmp.store.collection<OutboxDoc>(OUTBOX_COLLECTION, outboxSchema).find({})).flatMap((d) => d.facts ?? [d]);


it('queues a page: one rendered RSS message and one delivery job per reader, keyed by the send; the cursor walks the audience to its end', async () => {
  const a = await account(3);
  const first = await queueAudiencePage(deps(), page(a));
  expect(first).toMatchObject({ recipientCount: 2, suppressedCount: 0, next: expect.any(String) });
  const last = await queueAudiencePage(deps(), page(a, { after: first.next }));
  expect(last).toEqual({ recipientCount: 1, suppressedCount: 0, next: '' });
  const messages = await queued(a.accountId);
  expect(messages.map((m) => m.email).sort()).toEqual(['reader0@example.org', 'reader1@example.org', 'reader2@example.org']);
  expect(messages.every((m) => m.kind === 'RSS' && m.status === 'QUEUED' && m.subject === 'Digest: Post 1' && m.topicId === a.topicId)).toBe(true);
  expect(await jobs()).toHaveLength(3);
});

it('asked again (a retry, a restart, a second replica at once): nobody is queued twice', async () => {
  const a = await account(2);
  const [x, y] = await Promise.all([queueAudiencePage(deps(), page(a)), queueAudiencePage(deps(), page(a))]);
  expect([x.recipientCount, y.recipientCount]).toEqual([2, 2]);
  expect(await queueAudiencePage(deps(), page(a))).toMatchObject({ recipientCount: 2 });
  expect(await queued(a.accountId)).toHaveLength(2);
  expect(await jobs()).toHaveLength(2);
});

it('a suppressed reader is counted, not mailed; one suppressed after being queued still counts as queued', async () => {
  const a = await account(2);
  await suppressionsOf(suppressionCollection(tmp.store), a.accountId).add({ _id: crypto.randomUUID(), email: 'reader1@example.org', reason: 'COMPLAINT', createdAt: new Date(), messageId: null });
  expect(await queueAudiencePage(deps(), page(a))).toMatchObject({ recipientCount: 1, suppressedCount: 1 });
  expect((await queued(a.accountId)).map((m) => m.email)).toEqual(['reader0@example.org']);
  await suppressionsOf(suppressionCollection(tmp.store), a.accountId).add({ _id: crypto.randomUUID(), email: 'reader0@example.org', reason: 'MANUAL', createdAt: new Date(), messageId: null });
  expect(await queueAudiencePage(deps(), page(a))).toMatchObject({ recipientCount: 1, suppressedCount: 1 });
});

it('page guards: an empty or too long sendKey, TRANSACTIONAL mail, a page size out of 1..1000, reserved value names: validation refusals, nobody asked or queued', async () => {
  const a = await account(1);
  const cases: Array<[Partial<AudiencePageInput>, string, string]> = [
    [{ sendKey: '' }, 'validation_failed', 'sendKey'],
    [{ sendKey: 'k'.repeat(121) }, 'validation_failed', 'sendKey'],
    [{ kind: 'TRANSACTIONAL' }, 'validation_failed', 'kind'],
    [{ pageSize: 0 }, 'validation_failed', 'pageSize'],
    [{ pageSize: 1001 }, 'validation_failed', 'pageSize'],
    [{ pageSize: 2.5 }, 'validation_failed', 'pageSize'],
    [{ content: content({ values: { subscriber: 'me' } }) }, 'reserved_substitution_key', 'content.values.subscriber'],
  ];
  for (const [over, errorId, path] of cases) {
    const err = await refusal(queueAudiencePage(deps(), page(a, over)));
    expect([over, err.errorId, err.details?.[0]?.path]).toEqual([over, errorId, path]);
  }
  expect(await queued(a.accountId)).toEqual([]);
});

it('content that does not compile is template_syntax_error; a sender profile that is gone, none at all, or of an unverified domain is refused; nothing queued', async () => {
  const a = await account(1);
  expect((await refusal(queueAudiencePage(deps(), page(a, { content: content({ html: '{% for x in %}' }) })))).errorId).toBe('template_syntax_error');
  expect((await refusal(queueAudiencePage(deps(), page(a, { senderProfileId: crypto.randomUUID() })))).errorId).toBe('sender_profile_not_found');
  const noSender = { ...a, accountId: crypto.randomUUID() };
  expect((await refusal(queueAudiencePage(deps(), page(noSender, { senderProfileId: '' })))).errorId).toBe('sender_profile_required');
  const required = deps({ domains: domainPolicy({ store: tmp.store, verification: 'required', keys: null, operatorKeys: {} }) });
  expect((await refusal(queueAudiencePage(required, page(a)))).errorId).toBe('sender_domain_not_verified');
  expect(await queued(a.accountId)).toEqual([]);
  expect(await jobs()).toEqual([]);
});

it('an audience that cannot be read: a topic or segment the subscriber and segment services do not know, or the subscriber service not answering', async () => {
  const a = await account(1);
  expect((await refusal(queueAudiencePage(deps(), page(a, { topicId: crypto.randomUUID() })))).errorId).toBe('topic_not_found');
  expect((await refusal(queueAudiencePage(deps(), page(a, { segmentId: crypto.randomUUID() })))).errorId).toBe('segment_not_found');
  const down = audienceClient(`127.0.0.1:${await freePort()}`);
  try {
    const err = await refusal(queueAudiencePage(deps({ audience: down }), page(a)));
    expect(err).toBeInstanceOf(PeerUnavailable);
    expect(err.errorId).toBe('service_unavailable');
  } finally {
    down.close();
  }
  expect(await queued(a.accountId)).toEqual([]);
});

it('a render that fails for one reader of the page (an output limit) fails the whole page: template_render_failed, nobody of it queued; the other page is unaffected', async () => {
  const a = await account(3);
  // A summary printed twice for Reader 1 passes the renderer's output limit.
  const failing = content({ html: '<p>{{ subscriber.firstName }}</p>{% if subscriber.firstName == "Reader 1" %}{{ summary }}{{ summary }}{% endif %}', values: { summary: 'x'.repeat(600_000) } });
  // The audience's order is the subscriber service's: find the page Reader 1 is on.
  const first = await audience.page(a.accountId, { segmentId: null, topicId: a.topicId, after: '', pageSize: 2 });
  const [failingAt, otherAt] = first.recipients.some((r) => r.firstName === 'Reader 1') ? ['', first.next] : [first.next, ''];
  const err = await refusal(queueAudiencePage(deps(), page(a, { content: failing, after: failingAt })));
  expect(err.errorId).toBe('template_render_failed');
  expect(await queued(a.accountId)).toEqual([]);
  expect(await jobs()).toEqual([]);
  const other = await queueAudiencePage(deps(), page(a, { content: failing, after: otherAt }));
  expect((await queued(a.accountId)).map((m) => m.email)).not.toContain('reader1@example.org');
  expect(await queued(a.accountId)).toHaveLength(other.recipientCount);
});
