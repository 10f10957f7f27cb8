// Use case DeliverMessages (app/deliver-message.ts): the branches the worker's end-to-end tests
// (delivery.int.test.ts) cannot reach on demand, called directly on a real embedded store with messages
// the accepting use case stored, sending to a real SMTP relay: a job for no message or for a settled
// one, a deferred message asked before its time, another delivery's claim (in flight, taken over by
// the job's own redelivery, or settled under it), the account's rate, two deliveries at once, two jobs
// of one message in one batch, a body that went missing.
import crypto from 'node:crypto';
import { startCaptureRelay, waitFor, type CaptureRelay } from '@mailer/testing';
import { openTempStore, type TempStore } from '@mailer/testing/store';
import { publicLinks } from '../src/readers/app/public-links';
import { smtpTransport, type MailTransport } from '../src/clients/smtp-transport';
import { AccountSendRate } from '../src/mail/domain/send-rate';
import { messageCollections, messagesOf } from '../src/mail/store/messages';
import { suppressionCollection, suppressionsOf } from '../src/readers/store/suppressions';
import { useCases, type UseCases } from './support/use-cases';

jest.setTimeout(60_000);

const links = publicLinks({ PUBLIC_BASE_URL: 'https://mail.example.test', BOUNCE_DOMAIN: 'bounces.example.test', TRACKING_SECRET: 'x'.repeat(40), TRACKING_SECRET_PREVIOUS: [] });
let relay: CaptureRelay;
let transport: MailTransport;
let tmp: TempStore;
let uc: UseCases;
let warnings: string[];

beforeAll(async () => {
  relay = await startCaptureRelay();
  transport = smtpTransport({ SMTP_URL: relay.url, SMTP_POOL_SIZE: 4 });
});
afterAll(async () => {
  transport?.close();
  await relay?.close();
});
beforeEach(async () => {
  tmp = await openTempStore('deliver');
  warnings = [];
  uc = useCases({ store: tmp.store, links, transport, log: { warn: (_o, msg) => warnings.push(msg) } });
});
afterEach(() => tmp.close());

const stored = (accountId: string, id: string) => messagesOf(messageCollections(tmp.store), accountId).get(id);
const to = () => `r-${crypto.randomUUID()}@example.org`;

it('a job for no message is UNKNOWN_MESSAGE; for a message already settled ALREADY_DONE: nothing is sent again', async () => {
  const a = await uc.account();
  expect(await uc.deliver(a, crypto.randomUUID())).toEqual({ outcome: 'UNKNOWN_MESSAGE' });
  const email = to();
  const id = await uc.send(a, { email });
  expect(await uc.deliver(a, id)).toEqual({ outcome: 'DELIVERED' });
  expect(await uc.deliver(a, id, { jobId: 'seq:9' })).toEqual({ outcome: 'ALREADY_DONE' });
  expect(relay.receivedFor(email)).toHaveLength(1);
});

it('a DEFERRED message asked before its due time is NOT_DUE (the job comes back then); at its time it is sent', async () => {
  let now = new Date('2026-01-01T10:00:00Z');
  uc = useCases({ store: tmp.store, links, transport, now: () => now, retrySchedule: [60] });
  const a = await uc.account();
  const email = to();
  relay.answer(email, [451, 250]);
  const id = await uc.send(a, { email });
  expect(await uc.deliver(a, id)).toEqual({ outcome: 'DEFERRED', retryInMs: 60_000 });
  expect(await uc.deliver(a, id, { deliveryCount: 2 })).toEqual({ outcome: 'NOT_DUE', retryInMs: 60_000 });
  now = new Date(now.getTime() + 60_000);
  expect(await uc.deliver(a, id, { deliveryCount: 3 })).toEqual({ outcome: 'DELIVERED' });
  expect(relay.attemptsFor(email)).toBe(2);
});

it("another job's claim is IN_FLIGHT; the same job's redelivery takes the claim over and sends; the first sender's outcome is then not recorded", async () => {
  const a = await uc.account();
  const email = to();
  const id = await uc.send(a, { email });
  relay.setDataDelay(1_500);
  try {
    const first = uc.deliver(a, id, { jobId: 'seq:1', deliveryCount: 1 });
    await waitFor("the first delivery's claim, recorded before it sends", async () => (await stored(a, id))?.sending, 10_000);
    expect(await uc.deliver(a, id, { jobId: 'seq:2', deliveryCount: 1 })).toEqual({ outcome: 'IN_FLIGHT', retryInMs: 5_000 });
    // seq:1 delivered again (its first delivery looked lost): it may take over and send
    const again = uc.deliver(a, id, { jobId: 'seq:1', deliveryCount: 2 });
    const outcomes = await Promise.all([first, again]);
    expect(outcomes.map((o) => o.outcome).sort()).toEqual(['ALREADY_DONE', 'DELIVERED']);
  } finally {
    relay.setDataDelay(0);
  }
  expect(warnings).toContain('delivery claim was taken over during the send; outcome not recorded');
  const m = (await stored(a, id))!;
  expect(m).toMatchObject({ status: 'DELIVERED', sending: null });
  // the abandoned attempt stays in the log; the mail went out twice (both were on the wire)
  expect(m.attempts.map((x) => x.outcome)).toEqual(['STARTED', 'SENT']);
  expect(relay.receivedFor(email)).toHaveLength(2);
});

it('over the account rate the job is RATE_LIMITED and comes back when a token is due; nothing is claimed', async () => {
  const rate = new AccountSendRate(1);
  uc = useCases({ store: tmp.store, links, transport, sendRate: rate });
  const a = await uc.account();
  const id = await uc.send(a, { email: to() });
  rate.take(a, 1_000);
  rate.take(a, 1_000);
  const limited = await uc.deliver(a, id);
  expect(limited).toMatchObject({ outcome: 'RATE_LIMITED' });
  expect((limited as { retryInMs: number }).retryInMs).toBeGreaterThan(1_000);
  expect(await stored(a, id)).toMatchObject({ status: 'QUEUED', sending: null, attempts: [] });
});

it('two deliveries of one message at once: one sends, the other is IN_FLIGHT; a suppressed one: one suppresses it, the other sends nothing', async () => {
  const a = await uc.account();
  const email = to();
  const id = await uc.send(a, { email });
  const both = await Promise.all([uc.deliver(a, id, { jobId: 'seq:1' }), uc.deliver(a, id, { jobId: 'seq:2' })]);
  expect(both.map((o) => o.outcome).sort()).toEqual(['DELIVERED', 'IN_FLIGHT']);
  expect(relay.receivedFor(email)).toHaveLength(1);

  const gone = to();
  const later = await uc.send(a, { email: gone });
  await suppressionsOf(suppressionCollection(tmp.store), a).add({ _id: crypto.randomUUID(), email: gone, reason: 'COMPLAINT', createdAt: new Date(), messageId: null });
  const outcomes = (await Promise.all([uc.deliver(a, later, { jobId: 'seq:3' }), uc.deliver(a, later, { jobId: 'seq:4' })])).map((o) => o.outcome);
  expect(outcomes).toContain('SUPPRESSED');
  expect(outcomes.filter((o) => o !== 'SUPPRESSED')).toEqual([expect.stringMatching(/^(IN_FLIGHT|ALREADY_DONE)$/)]);
  expect(await stored(a, later)).toMatchObject({ status: 'SUPPRESSED', suppressionReason: 'COMPLAINT', attempts: [] });
  expect(relay.receivedFor(gone)).toHaveLength(0);
});

it('one batch of several accounts: two jobs of one message send it once (the second IN_FLIGHT), a job for no message is answered alone', async () => {
  const [a, b] = [await uc.account(), await uc.account()];
  const [ea, eb] = [to(), to()];
  const [ida, idb] = [await uc.send(a, { email: ea }), await uc.send(b, { email: eb })];
  const results = await uc.deliverBatch([
    { accountId: a, messageId: ida },
    { accountId: b, messageId: idb },
    { accountId: a, messageId: ida },
    { accountId: b, messageId: crypto.randomUUID() },
  ]);
  expect(results).toEqual([{ outcome: 'DELIVERED' }, { outcome: 'DELIVERED' }, { outcome: 'IN_FLIGHT', retryInMs: 5_000 }, { outcome: 'UNKNOWN_MESSAGE' }]);
  expect([relay.receivedFor(ea).length, relay.receivedFor(eb).length]).toEqual([1, 1]);
  expect(await stored(a, ida)).toMatchObject({ status: 'DELIVERED', sending: null });
});

it('a sendable message whose body is missing is FAILED at once (a retry would not bring it back), nothing sent', async () => {
  const a = await uc.account();
  const email = to();
  const id = await uc.send(a, { email });
  // a fault no path produces: the body of a QUEUED message deleted
  await messagesOf(messageCollections(tmp.store), a).dropBody(id);
  expect(await uc.deliver(a, id)).toEqual({ outcome: 'FAILED' });
  expect(await stored(a, id)).toMatchObject({ status: 'FAILED', attempts: [expect.objectContaining({ outcome: 'FAILED', response: 'the rendered body of the message is missing' })] });
  expect(relay.attemptsFor(email)).toBe(0);
});

/** A named fault: the collection answers reads and refuses every write, as a store failing under a write would. */
function refusingWrites<C extends object>(collection: C): C {
  const writes = new Set(['insertOne', 'insertMany', 'updateOne', 'updateMany', 'findOneAndUpdate', 'deleteOne', 'deleteMany', 'bulkWrite']);
  return new Proxy(collection, {
    get: (target, name, receiver) => (writes.has(String(name)) ? async () => { throw new Error('store unavailable'); } : Reflect.get(target, name, receiver)),
  });
}

it('a 550 whose bounce cannot be recorded: the job fails (it is retried), the message stays sendable, and the retry records the bounce', async () => {
  const a = await uc.account();
  const email = to();
  relay.answer(email, [550, 550]);
  const id = await uc.send(a, { email });
  const suppressions = uc.delivery.bounces.suppressions;
  uc.delivery.bounces.suppressions = refusingWrites(suppressions);
  const [failed] = await uc.deliverBatch([{ accountId: a, messageId: id }]);
  expect(failed).toEqual({ error: expect.objectContaining({ message: expect.stringContaining('store unavailable') }) });
  expect((await stored(a, id))?.status).not.toBe('BOUNCED');
  expect(await suppressionsOf(suppressionCollection(tmp.store), a).find(email)).toBeNull();

  uc.delivery.bounces.suppressions = suppressions;
  expect(await uc.deliver(a, id, { deliveryCount: 2 })).toEqual({ outcome: 'BOUNCED' });
  expect(relay.attemptsFor(email)).toBe(2);
  expect((await stored(a, id))?.status).toBe('BOUNCED');
  expect(await suppressionsOf(suppressionCollection(tmp.store), a).find(email)).toMatchObject({ reason: 'HARD_BOUNCE' });
});
