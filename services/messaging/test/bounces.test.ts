// Bounce and complaint effects (app/bounces.ts) on a real embedded store: the message record, the
// suppression list, and what the outbox will publish (email.* facts, subscriber-status jobs).
import { fixedClock, sequentialIds } from '@mailer/kit';
import { OUTBOX_COLLECTION, outboxSchema, type OutboxDoc } from '@mailer/nats';
import { openTempStore, type TempStore } from '@mailer/testing/store';
import { bounceDeps, recordBounce, recordComplaint, recordDsnDelivery, type BounceDeps } from '../src/readers/app/bounces';
import { messagesOf, type EmailMessageDoc, noEngagementYet } from '../src/mail/store/messages';
import { suppressionsOf } from '../src/readers/store/suppressions';

const ACCOUNT = '0190a1b2-0000-7000-8000-000000000001';
const OTHER_ACCOUNT = '0190a1b2-0000-7000-8000-000000000002';
const TOPIC = '0190a1b2-0000-7000-8000-0000000000aa';
const DAY = 24 * 3600_000;

let seq = 0;
function messageDoc(over: Partial<EmailMessageDoc> = {}): Omit<EmailMessageDoc, 'accountId'> {
  seq++;
  const at = new Date('2026-01-01T00:00:00Z');
  return {
    _id: `0190a1b2-0000-7000-8000-${String(seq).padStart(12, '0')}`,
    kind: 'TRANSACTIONAL',
    templateName: 'welcome',
    email: 'ann@example.org',
    subscriberId: null,
    topicId: null,
    senderProfileId: 'sp',
    fromEmail: 'news@example.com',
    fromName: 'News',
    replyTo: null,
    subject: 'Hello',
    links: [],
    tracking: { opens: true, clicks: true },
    status: 'SENT',
    suppressionReason: null,
    history: [{ status: 'QUEUED', at }, { status: 'SENT', at }],
    attempts: [],
    nextAttemptAt: null,
    createdAt: at,
    sentAt: at,
    deliveredAt: null,
    bouncedAt: null,
    complainedAt: null,
    ...noEngagementYet(),
    eventProperties: { orderId: 'o-1' },
    ...over,
  };
}

describe('bounce and complaint effects', () => {
  let temp: TempStore;
  let deps: BounceDeps;
  const clock = fixedClock('2026-01-02T10:00:00Z');
  let notified = 0;

  beforeEach(async () => {
    temp = await openTempStore('mailer-bounces');
    notified = 0;
    deps = bounceDeps({ store: temp.store, notifyOutbox: () => notified++, now: clock.now, newId: sequentialIds().newId });
  });
  afterEach(() => temp.close());

  const insert = async (over: Partial<EmailMessageDoc> = {}, accountId = ACCOUNT) => {
    const doc = messageDoc(over);
    await messagesOf(deps.messages, accountId).insert(doc, { html: '<p>x</p>', text: 'x', headers: {} });
    return doc._id;
  };
  const outbox = () => temp.store.collection<OutboxDoc>(OUTBOX_COLLECTION, outboxSchema).find({}, { sort: { createdAt: 1 } });
  const message = (id: string, accountId = ACCOUNT) => messagesOf(deps.messages, accountId).get(id);
  const suppression = (email: string, accountId = ACCOUNT) => suppressionsOf(deps.suppressions, accountId).find(email);
  const at = (iso: string) => new Date(iso);

  it('hard bounce: message BOUNCED with bounce details and body dropped, HARD_BOUNCE suppression, email.bounced fact and a BOUNCED status job', async () => {
    const id = await insert({ subscriberId: '0190a1b2-0000-7000-8000-0000000000bb' });
    const out = await recordBounce(deps, { accountId: ACCOUNT, messageId: id, type: 'HARD', diagnosticCode: 'smtp; 550 5.1.1 user unknown', at: at('2026-01-02T10:00:00Z') });
    expect(out).toEqual({ outcome: 'recorded', suppressed: 'HARD_BOUNCE' });
    const m = (await message(id))!;
    expect(m.status).toBe('BOUNCED');
    expect(m.bouncedAt).toEqual(at('2026-01-02T10:00:00Z'));
    expect(m.bounce).toEqual({ type: 'HARD', diagnosticCode: 'smtp; 550 5.1.1 user unknown' });
    expect(m.history.at(-1)).toEqual({ status: 'BOUNCED', at: at('2026-01-02T10:00:00Z') });
    expect(await messagesOf(deps.messages, ACCOUNT).body(id)).toBeNull();
    expect(await suppression('ann@example.org')).toMatchObject({ reason: 'HARD_BOUNCE', messageId: id, createdAt: at('2026-01-02T10:00:00Z') });
    const published = await outbox();
    expect(published.map((d) => d.subject)).toEqual(['domain.email.bounced', `jobs.subscriber-status.${ACCOUNT}`]);
    expect(published[0].payload).toEqual({
      type: 'email.bounced',
      accountId: ACCOUNT,
      occurredAt: '2026-01-02T10:00:00.000Z',
      messageId: id,
      email: 'ann@example.org',
      subscriberId: '0190a1b2-0000-7000-8000-0000000000bb',
      kind: 'TRANSACTIONAL',
      templateName: 'welcome',
      eventProperties: { orderId: 'o-1' },
      bounceType: 'HARD',
      diagnosticCode: 'smtp; 550 5.1.1 user unknown',
    });
    expect(published[1].payload).toEqual({ accountId: ACCOUNT, messageId: id, status: 'BOUNCED' });
    expect(notified).toBe(1);
  });

  it('the same report twice changes nothing the second time', async () => {
    const id = await insert();
    const input = { accountId: ACCOUNT, messageId: id, type: 'HARD' as const, diagnosticCode: '550', at: at('2026-01-02T10:00:00Z') };
    await recordBounce(deps, input);
    const before = { message: await message(id), outbox: await outbox() };
    expect(await recordBounce(deps, { ...input, at: at('2026-01-02T11:00:00Z') })).toEqual({ outcome: 'duplicate', suppressed: null });
    expect({ message: await message(id), outbox: await outbox() }).toEqual(before);

    const c = { accountId: ACCOUNT, messageId: id, at: at('2026-01-02T12:00:00Z') };
    expect((await recordComplaint(deps, c)).outcome).toBe('recorded');
    const afterComplaint = await outbox();
    expect(await recordComplaint(deps, { ...c, at: at('2026-01-03T00:00:00Z') })).toEqual({ outcome: 'duplicate', suppressed: null });
    expect(await outbox()).toEqual(afterComplaint);
    expect(notified).toBe(2);
  });

  it('soft bounces: the message is BOUNCED (soft); the third of one address within 7 days suppresses it (SOFT_BOUNCES), older ones do not count', async () => {
    const old = await insert();
    const a = await insert();
    const b = await insert();
    const c = await insert();
    const soft = (messageId: string, iso: string) => recordBounce(deps, { accountId: ACCOUNT, messageId, type: 'SOFT', diagnosticCode: '452 mailbox full', at: at(iso) });
    expect(await soft(old, '2025-12-20T00:00:00Z')).toEqual({ outcome: 'recorded', suppressed: null });
    expect(await soft(a, '2026-01-01T00:00:00Z')).toEqual({ outcome: 'recorded', suppressed: null });
    expect(await soft(b, '2026-01-05T00:00:00Z')).toEqual({ outcome: 'recorded', suppressed: null });
    expect(await suppression('ann@example.org')).toBeNull();
    expect((await message(b))!.bounce).toEqual({ type: 'SOFT', diagnosticCode: '452 mailbox full' });
    // The same soft report for b again is no new soft bounce.
    expect((await soft(b, '2026-01-06T00:00:00Z')).outcome).toBe('duplicate');
    expect(await soft(c, new Date(new Date('2026-01-01T00:00:00Z').getTime() + 7 * DAY).toISOString())).toEqual({ outcome: 'recorded', suppressed: 'SOFT_BOUNCES' });
    expect(await suppression('ann@example.org')).toMatchObject({ reason: 'SOFT_BOUNCES', messageId: c });
    // Soft bounces change no subscriber status: only facts, no jobs.
    expect((await outbox()).map((d) => d.subject)).toEqual(Array(4).fill('domain.email.bounced'));
  });

  it('a hard bounce after a soft one of the same message replaces it; a soft one after a hard one is a duplicate', async () => {
    const id = await insert();
    await recordBounce(deps, { accountId: ACCOUNT, messageId: id, type: 'SOFT', diagnosticCode: '450', at: at('2026-01-02T10:00:00Z') });
    expect((await recordBounce(deps, { accountId: ACCOUNT, messageId: id, type: 'HARD', diagnosticCode: '550', at: at('2026-01-02T11:00:00Z') })).suppressed).toBe('HARD_BOUNCE');
    expect((await message(id))!.bounce).toEqual({ type: 'HARD', diagnosticCode: '550' });
    expect((await recordBounce(deps, { accountId: ACCOUNT, messageId: id, type: 'SOFT', diagnosticCode: '450', at: at('2026-01-02T12:00:00Z') })).outcome).toBe('duplicate');
  });

  it('complaint: COMPLAINT suppression, email.complained with the topic, a COMPLAINED status job; the message status stays', async () => {
    const id = await insert({ kind: 'AUTOMATION', topicId: TOPIC, status: 'DELIVERED' });
    expect(await recordComplaint(deps, { accountId: ACCOUNT, messageId: id, at: at('2026-01-02T10:00:00Z') })).toEqual({ outcome: 'recorded', suppressed: 'COMPLAINT' });
    const m = (await message(id))!;
    expect(m.status).toBe('DELIVERED');
    expect(m.complainedAt).toEqual(at('2026-01-02T10:00:00Z'));
    expect(await suppression('ann@example.org')).toMatchObject({ reason: 'COMPLAINT', messageId: id });
    const published = await outbox();
    expect(published.map((d) => d.subject)).toEqual(['domain.email.complained', `jobs.subscriber-status.${ACCOUNT}`]);
    expect(published[0].payload).toMatchObject({ type: 'email.complained', kind: 'AUTOMATION', topicId: TOPIC, messageId: id });
    expect(published[1].payload).toEqual({ accountId: ACCOUNT, messageId: id, status: 'COMPLAINED' });
  });

  it('an address already suppressed keeps its first reason', async () => {
    const first = await insert();
    const second = await insert();
    await recordBounce(deps, { accountId: ACCOUNT, messageId: first, type: 'HARD', diagnosticCode: null, at: at('2026-01-02T10:00:00Z') });
    expect(await recordComplaint(deps, { accountId: ACCOUNT, messageId: second, at: at('2026-01-02T11:00:00Z') })).toEqual({ outcome: 'recorded', suppressed: null });
    expect(await suppression('ann@example.org')).toMatchObject({ reason: 'HARD_BOUNCE', messageId: first });
  });

  it('another account cannot touch a message: message_not_found, nothing recorded', async () => {
    const id = await insert();
    expect(await recordBounce(deps, { accountId: OTHER_ACCOUNT, messageId: id, type: 'HARD', diagnosticCode: null, at: at('2026-01-02T10:00:00Z') })).toEqual({ outcome: 'message_not_found', suppressed: null });
    expect(await recordComplaint(deps, { accountId: OTHER_ACCOUNT, messageId: id, at: at('2026-01-02T10:00:00Z') })).toEqual({ outcome: 'message_not_found', suppressed: null });
    expect((await message(id))!.status).toBe('SENT');
    expect(await suppression('ann@example.org', OTHER_ACCOUNT)).toBeNull();
    expect(await outbox()).toEqual([]);
  });

  it('success DSN: SENT -> DELIVERED with email.delivered once; a bounced message stays BOUNCED', async () => {
    const id = await insert();
    expect((await recordDsnDelivery(deps, { accountId: ACCOUNT, messageId: id, at: at('2026-01-02T10:00:00Z') })).outcome).toBe('recorded');
    expect(await message(id)).toMatchObject({ status: 'DELIVERED', deliveredAt: at('2026-01-02T10:00:00Z') });
    expect((await recordDsnDelivery(deps, { accountId: ACCOUNT, messageId: id, at: at('2026-01-02T11:00:00Z') })).outcome).toBe('duplicate');
    const bounced = await insert();
    await recordBounce(deps, { accountId: ACCOUNT, messageId: bounced, type: 'HARD', diagnosticCode: null, at: at('2026-01-02T10:00:00Z') });
    expect((await recordDsnDelivery(deps, { accountId: ACCOUNT, messageId: bounced, at: at('2026-01-02T11:00:00Z') })).outcome).toBe('duplicate');
    expect((await message(bounced))!.status).toBe('BOUNCED');
    expect((await outbox()).map((d) => d.subject)).toEqual(['domain.email.delivered', 'domain.email.bounced', `jobs.subscriber-status.${ACCOUNT}`]);
  });
});
