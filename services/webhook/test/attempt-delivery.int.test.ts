// Use case AttemptDelivery (app/attempt-delivery.ts: claim, attempt, settle, composed as the worker does),
// every branch, and the worker's own (a job it cannot read, a claim that throws): deliveries made by the
// API's use case (sendTestEvent) on a real
// embedded store, posted through the real outbound guard to real HTTP receivers on loopback, the worker
// on a real nats-server. What an integrator notices: one attempt at a time, the log of each attempt,
// the retry time, FAILED and the subscription disabled with its reason, counted once.
import crypto from 'node:crypto';
import { connect, type NatsConnection } from 'nats';
import { ensureStreams, OUTBOX_COLLECTION, outboxSchema, publish, type OutboxDoc } from '@mailer/nats';
import { createOutbound, type Outbound } from '@mailer/outbound';
import { freePort, startNatsServer, waitFor, waitForSettled, type NatsServerHandle } from '@mailer/testing';
import { openTempStore, type TempStore } from '@mailer/testing/store';
import { abandoned, attemptDelivery, claimDeliveries, settleDeliveries, type AttemptOutcome } from '../src/app/attempt-delivery';
import { sendTestEvent } from '../src/app/deliveries';
import { newDelivery } from '../src/app/fan-out';
import { DISABLE_AFTER_FAILING_MS, newSecret, type DisabledReason, type Subscription } from '../src/domain/subscription';
import { startDeliveryWorker, type DeliveryWorkerOptions } from '../src/events/delivery-worker';
import { NATS_ACCESS } from '../src/nats-access';
import { deliveryRepository } from '../src/store/deliveries';
import { secretKeyring, subscriptionRepository } from '../src/store/subscriptions';
import { subscription } from './support/fixtures';
import { startReceiver, type Receiver, type Respond } from './support/receivers';

jest.setTimeout(60_000);

const ACC = crypto.randomUUID();
const SCHEDULE = [60_000, 120_000];
let tmp: TempStore;
let outbound: Outbound;
let receivers: Receiver[];
let now: Date;
let disabled: DisabledReason[];

beforeAll(() => {
  outbound = createOutbound({ allowHttp: true, allowedCidrs: ['127.0.0.0/8', '::1/128'] });
});
afterAll(() => outbound.close());
beforeEach(async () => {
  tmp = await openTempStore('attempt');
  current = repos();
  receivers = [];
  now = new Date(); // signatures carry it: a receiver verifies them against its own clock
  disabled = [];
});
afterEach(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await tmp.close().catch(() => undefined);
});

const keyring = secretKeyring(crypto.randomBytes(32));
const repos = () => ({ deliveries: deliveryRepository(tmp.store), subscriptions: subscriptionRepository(tmp.store, keyring) });
let current: ReturnType<typeof repos>;
function deps(): DeliveryWorkerOptions['deps'] {
  return { ...current, outbound, now: () => now, claimMs: 30_000, retrySchedule: SCHEDULE, subscriptionsDisabled: { inc: ({ reason }) => disabled.push(reason) } };
}

/** A subscription to a new receiver answering `respond`, and a test event's delivery to it (POST .../test). */
async function deliveryTo(respond: Respond, over: Partial<Subscription> = {}) {
  const secret = newSecret();
  const receiver = await startReceiver([secret], respond);
  receivers.push(receiver);
  const sub = await current.subscriptions.create(subscription(ACC, receiver.url, { secret, ...over }));
  return { sub, deliveryId: await testEvent(sub.id), receiver };
}
/** POST .../test of the subscription: a new delivery, due now. */
const testEvent = (subscriptionId: string) =>
  sendTestEvent({ store: tmp.store, ...current, outbox: tmp.store.collection<OutboxDoc>(OUTBOX_COLLECTION, outboxSchema), now: () => now, notifyOutbox: () => undefined }, { accountId: ACC, subscriptionId });
const delivery = (id: string) => current.deliveries.get(ACC, id);
/** One delivery claimed, attempted (or given up) and settled on its own, as the worker does for a batch. */
async function attempt(id: string): Promise<AttemptOutcome> {
  const { subscriptionId } = (await delivery(id))!;
  const [claimed] = await claimDeliveries(deps(), [{ accountId: ACC, subscriptionId, deliveryIds: [id] }]);
  const taken = claimed?.deliveries.find((d) => d._id === id);
  if (!taken) return 'NOT_DUE';
  const outcome = claimed.subscription?.active ? await attemptDelivery(deps(), claimed.subscription, taken, claimed.claimId) : abandoned(taken, claimed.claimId);
  await settleDeliveries(deps(), [outcome]);
  return outcome.outcome;
}

it('a settlement that throws (the store failing after the post): the delivery keeps its claim until it expires, then is posted again with the same webhook-id', async () => {
  const { deliveryId, receiver } = await deliveryTo(() => ({ status: 204 }));
  const { subscriptionId } = (await delivery(deliveryId))!;
  // a named fault: the outcome cannot be written
  const failing = { ...deps(), deliveries: { ...current.deliveries, settle: async () => Promise.reject(new Error('store unavailable')) } };
  const [claimed] = await claimDeliveries(failing, [{ accountId: ACC, subscriptionId, deliveryIds: [deliveryId] }]);
  const outcome = await attemptDelivery(failing, claimed.subscription!, claimed.deliveries[0], claimed.claimId);
  await expect(settleDeliveries(failing, [outcome])).rejects.toThrow('store unavailable');
  expect(receiver.received).toHaveLength(1);
  expect((await delivery(deliveryId))!.status).not.toBe('DELIVERED');
  expect(await attempt(deliveryId)).toBe('NOT_DUE'); // still claimed: nobody posts it meanwhile
  now = new Date(now.getTime() + 30_001); // the claim (claimMs) has expired
  expect(await attempt(deliveryId)).toBe('DELIVERED');
  expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([receiver.received[0].headers['webhook-id'], receiver.received[0].headers['webhook-id']]);
});

it('2xx: DELIVERED with the attempt logged; a subscription failing until then is healthy again', async () => {
  const { sub, deliveryId, receiver } = await deliveryTo(() => ({ status: 204 }), { failingSince: new Date(now.getTime() - 3_600_000) });
  expect(await attempt(deliveryId)).toBe('DELIVERED');
  expect(await delivery(deliveryId)).toMatchObject({ status: 'DELIVERED', nextAttemptAt: null, failures: 0, attempts: [{ statusCode: 204, error: null }] });
  expect(receiver.received).toHaveLength(1);
  expect(receiver.received[0].verifiedWith).toHaveLength(1);
  expect((await current.subscriptions.get(ACC, sub.id))!.failingSince).toBeNull();
});

it('a delivery claimed by another attempt, or settled already, is NOT_DUE: only one attempt posts', async () => {
  const { deliveryId, receiver } = await deliveryTo(() => ({ status: 200, delayMs: 300 }));
  const both = await Promise.all([attempt(deliveryId), attempt(deliveryId)]);
  expect(both.sort()).toEqual(['DELIVERED', 'NOT_DUE']);
  expect(await attempt(deliveryId)).toBe('NOT_DUE');
  expect(receiver.received).toHaveLength(1);
});

it('a disabled or deleted subscription: ABANDONED, nothing posted', async () => {
  const off = await deliveryTo(() => ({ status: 204 }), { active: false });
  expect(await attempt(off.deliveryId)).toBe('ABANDONED');
  const gone = await deliveryTo(() => ({ status: 204 }));
  await current.subscriptions.delete(ACC, gone.sub.id);
  expect(await attempt(gone.deliveryId)).toBe('ABANDONED');
  expect([...off.receiver.received, ...gone.receiver.received]).toEqual([]);
  expect(await delivery(gone.deliveryId)).toMatchObject({ status: 'FAILED' });
});

it('a 500, a redirect (never followed), a target that refuses the connection and one the guard refuses: RETRYING on the schedule, each attempt logged with its error; the subscription marked failing', async () => {
  const cases: Array<[Respond | string, number | null, RegExp]> = [
    [() => ({ status: 500, body: 'oops' }), 500, /^HTTP 500$/],
    [() => ({ status: 302, headers: { location: 'http://127.0.0.1:1/' } }), 302, /^redirect 302 not followed$/],
    [`http://127.0.0.1:${await freePort()}/hook`, null, /./],
    ['http://10.11.12.13/hook', null, /./], // not in the allowed ranges: never connected to
  ];
  for (const [target, statusCode, error] of cases) {
    const { sub, deliveryId } = typeof target === 'string' ? await deliveryTo(() => ({ status: 204 }), { targetUrl: target }) : await deliveryTo(target);
    expect(await attempt(deliveryId)).toBe('RETRYING');
    const d = (await delivery(deliveryId))!;
    expect(d).toMatchObject({ status: 'RETRYING', failures: 1, attempts: [{ statusCode, error: expect.stringMatching(error) }] });
    // the first step of the schedule, ±20 % jitter
    const wait = d.nextAttemptAt!.getTime() - now.getTime();
    expect(wait).toBeGreaterThanOrEqual(SCHEDULE[0] * 0.8);
    expect(wait).toBeLessThanOrEqual(SCHEDULE[0] * 1.2);
    expect((await current.subscriptions.get(ACC, sub.id))!.failingSince).toEqual(now);
  }
});

it("a 429's Retry-After is the retry time; the schedule used up: FAILED", async () => {
  const { deliveryId } = await deliveryTo((_r, nth) => (nth === 1 ? { status: 429, headers: { 'retry-after': '7' } } : { status: 503 }));
  expect(await attempt(deliveryId)).toBe('RETRYING');
  expect((await delivery(deliveryId))!.nextAttemptAt).toEqual(new Date(now.getTime() + 7_000));
  now = new Date(now.getTime() + 7_000);
  expect(await attempt(deliveryId)).toBe('RETRYING'); // the second step
  now = new Date(now.getTime() + SCHEDULE[1] * 1.2);
  expect(await attempt(deliveryId)).toBe('FAILED');
  expect(await delivery(deliveryId)).toMatchObject({ status: 'FAILED', failures: 3, nextAttemptAt: null });
  expect(disabled).toEqual([]);
});

it('410: FAILED and the subscription disabled TARGET_GONE, counted once even when two deliveries are told at once', async () => {
  const { sub, deliveryId } = await deliveryTo(() => ({ status: 410 }));
  const second = await testEvent(sub.id);
  expect(await Promise.all([attempt(deliveryId), attempt(second)])).toEqual(['FAILED', 'FAILED']);
  expect(await current.subscriptions.get(ACC, sub.id)).toMatchObject({ active: false, disabledReason: 'TARGET_GONE' });
  expect(disabled).toEqual(['TARGET_GONE']);
});

it('failing for 5 days: the failed attempt disables the subscription FAILING_FOR_5_DAYS', async () => {
  const { sub, deliveryId } = await deliveryTo(() => ({ status: 500 }), { failingSince: new Date(now.getTime() - DISABLE_AFTER_FAILING_MS - 1) });
  expect(await attempt(deliveryId)).toBe('RETRYING');
  expect(await current.subscriptions.get(ACC, sub.id)).toMatchObject({ active: false, disabledReason: 'FAILING_FOR_5_DAYS' });
  expect(disabled).toEqual(['FAILING_FOR_5_DAYS']);
});

describe('the delivery worker', () => {
  let nats: NatsServerHandle;
  let nc: NatsConnection;
  beforeAll(async () => {
    nats = await startNatsServer();
    nc = await connect({ servers: nats.url, ...nats.auth });
    await ensureStreams(nc);
  });
  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
  });

  it('terminates a job it cannot read, and a claim that throws (the store gone) is logged and left due, nothing posted', async () => {
    const errors: string[] = [];
    const warnings: string[] = [];
    const { sub, deliveryId, receiver } = await deliveryTo(() => ({ status: 204 }));
    const logger = { warn: (_o: object, msg: string) => warnings.push(msg), error: (_o: object, msg: string) => errors.push(msg) };
    const worker = startDeliveryWorker({ nc, deps: deps(), perSubscription: 1, concurrency: 2, scanIntervalMs: 60_000, logger: logger as never });
    try {
      await publish(nc.jetstream(), `jobs.webhook.${ACC}`, { accountId: ACC });
      await waitForSettled(nc, { consumers: [NATS_ACCESS.consumers.deliveries.durable] });
      expect(errors).toEqual(['terminating malformed webhook job']);
      await tmp.store.close();
      await publish(nc.jetstream(), `jobs.webhook.${ACC}`, { accountId: ACC, subscriptionId: sub.id, deliveryIds: [deliveryId] });
      await waitFor('the failed claim logged', () => warnings.includes('claiming webhook deliveries failed; they stay due for the scan'), 10_000);
      expect(receiver.received).toEqual([]);
    } finally {
      await worker.stop();
    }
  });

  it('a job naming more deliveries than a lane holds in memory: the lane reads the rest back itself (no due-time scan), each posted once', async () => {
    const { sub, receiver } = await deliveryTo(() => ({ status: 204 }));
    const made = Array.from({ length: 1_500 }, (_, i) => newDelivery(sub, crypto.randomUUID(), 'subscriber.created', `{"n":${i}}`, now));
    await tmp.store.transaction((tx) => current.deliveries.create(made, tx));
    const scans: string[] = [];
    // the due-time scan never answers: whatever goes beyond the in-memory queue is the lane's to read back
    const noScan = { ...deps(), deliveries: { ...current.deliveries, dueAcrossAccounts: async () => (scans.push('scan'), Promise.reject(new Error('no scan in this test'))) } };
    const worker = startDeliveryWorker({ nc, deps: noScan, perSubscription: 8, concurrency: 64, scanIntervalMs: 60_000, logger: { warn: () => undefined, error: () => undefined } as never });
    try {
      // two jobs (a job names 1,000 at most), both read before the lane has posted much
      for (const part of [made.slice(0, 1_000), made.slice(1_000)]) {
        await publish(nc.jetstream(), `jobs.webhook.${ACC}`, { accountId: ACC, subscriptionId: sub.id, deliveryIds: part.map((d) => d._id) });
      }
      await waitFor('every delivery posted', () => made.every((d) => receiver.succeeded.has(d.eventId)), 30_000);
    } finally {
      await worker.stop();
    }
    const posted = receiver.received.map((r) => r.headers['webhook-id']);
    expect(new Set(posted).size).toBe(posted.length); // none twice
    expect(made.every((d) => receiver.succeeded.get(d.eventId) === 1)).toBe(true);
    expect(scans).toEqual([]);
  });
});
