// POST /reports/subscribers through the real gateway and the real subscriber process. Subscribers
// with known times are stored through the repository's document shape before the process starts
// on the data directory (toDoc stores registeredAt as a Date, as the service does); then status changes
// made through the running service (confirmation, ReplaceSubscriberStatus) show up in today's counts.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient } from '@mailer/kit';
import { signupV1, subscriberV1 } from '@mailer/proto';
import { openStore } from '@mailer/store';
import { createAccount, gatewaySecrets, serviceAddresses, startGateway, startNatsServer, startService, type GatewayHandle, type NatsServerHandle, type RunningService } from '@mailer/testing';
import { subscriberSchema, toDoc, type SubscriberDoc } from '../src/store/subscribers';

let nats: NatsServerHandle;
let subscriber: RunningService | undefined;
let gateway: GatewayHandle | undefined;
let dataDir: string;
const accounts: Record<'busy' | 'other' | 'live', { accountId: string; apiKey: string }> = {} as never;
const BULK = 1234;
const S = subscriberV1.SubscriberStatus;

function record(accountId: string, id: string, registeredAt: string, extra: Partial<SubscriberDoc> = {}): SubscriberDoc {
  const state = { id, email: `${id}@example.org`, firstName: null, status: 'ACTIVE' as const, tags: [], topicIds: [], optOuts: [], fields: {}, registeredAt, version: 1 };
  return { ...toDoc(accountId, state, registeredAt), ...extra };
}

beforeAll(async () => {
  nats = await startNatsServer();
  const secrets = gatewaySecrets();
  // Accounts first (the seeded records name them); this gateway knows no subscriber service yet.
  const first = await startGateway({ NATS_URL: nats.url, ...secrets, SUBSCRIBER_GRPC_ADDR: '127.0.0.1:1' });
  try {
    for (const name of ['busy', 'other', 'live'] as const) accounts[name] = await createAccount(first, `subscriber reports ${name}`);
  } finally {
    await first.stop();
  }
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-subscriber-reports-'));
  const store = await openStore({ dataDir: path.join(dataDir, 'subscriber') }); // the service's store lives in DATA_DIR/<name>
  const subscribers = store.collection<SubscriberDoc>('subscribers', subscriberSchema);
  const busy = accounts.busy.accountId;
  await subscribers.insertMany([
    // Europe/Berlin is UTC+1 in January: 2024-01-10 00:00 there is 2024-01-09T23:00Z
    record(busy, 's1', '2024-01-09T23:30:00.000Z'), // the 10th in Berlin, the 9th in UTC
    record(busy, 's2', '2024-01-10T12:00:00.000Z', { confirmedAt: new Date('2024-01-11T10:00:00.000Z') }),
    record(busy, 's3', '2024-01-10T22:59:59.999Z', { status: 'UNSUBSCRIBED', unsubscribedAt: new Date('2024-01-10T23:00:00.000Z') }), // unsubscribed at 00:00 on the 11th in Berlin
    record(busy, 's4', '2024-01-15T08:00:00.000Z', { confirmedAt: new Date('2024-02-01T00:00:00.000Z') }),
    ...Array.from({ length: BULK }, (_v, i) => record(busy, `bulk-${i}`, new Date(Date.parse('2024-01-11T08:00:00.000Z') + i * 1000).toISOString())),
    record(accounts.other.accountId, 'o1', '2024-01-10T12:00:00.000Z', { confirmedAt: new Date('2024-01-10T13:00:00.000Z') }),
  ]);
  await store.close();
  subscriber = await startService('subscriber', { NATS_URL: nats.url, DATA_DIR: dataDir });
  gateway = await startGateway({ NATS_URL: nats.url, ...secrets, ...serviceAddresses([subscriber]) });
}, 180_000);

afterAll(async () => {
  await gateway?.stop();
  await subscriber?.stop();
  await nats?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

async function report(account: keyof typeof accounts, body: unknown, acceptLanguage?: string) {
  const res = await fetch(`${gateway!.url}/reports/subscribers`, {
    method: 'POST',
    headers: { 'x-api-key': accounts[account].apiKey, 'content-type': 'application/json', ...(acceptLanguage !== undefined ? { 'accept-language': acceptLanguage } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

const METRICS = ['newSubscribers', 'confirmed', 'unsubscribed'] as const;
const values = (points: Array<Record<string, { value: number }>>) => Object.fromEntries(METRICS.map((m) => [m, points.map((p) => p[m].value)]));
const starts = (points: Array<{ periodStart: string }>) => points.map((p) => p.periodStart);
const berlinDays = { fromDate: '2024-01-10', toDate: '2024-01-12', interval: 'DAY', timeZone: 'Europe/Berlin' };

test('per local day in Europe/Berlin: each metric by its own time, crossing midnight into the zone\'s next day', async () => {
  const res = await report('busy', berlinDays);
  expect(res.status).toBe(200);
  expect(starts(res.json.points)).toEqual(['2024-01-10', '2024-01-11', '2024-01-12']);
  expect(values(res.json.points)).toEqual({ newSubscribers: [3, BULK, 0], confirmed: [0, 1, 0], unsubscribed: [0, 1, 0] });
  expect(res.json.points[1].newSubscribers).toEqual({ value: 1234, formattedValue: '1,234' });
  expect(Object.keys(res.json.points[0]).sort()).toEqual(['periodStart', ...METRICS].sort());
});

test('the same instants read in UTC fall on other days', async () => {
  const res = await report('busy', { ...berlinDays, timeZone: undefined });
  expect(values(res.json.points)).toEqual({ newSubscribers: [2, BULK, 0], confirmed: [0, 1, 0], unsubscribed: [1, 0, 0] });
});

test('ISO weeks from Monday (the first clamped to fromDate) and calendar months', async () => {
  const weeks = await report('busy', { fromDate: '2024-01-10', toDate: '2024-01-21', interval: 'WEEK', timeZone: 'Europe/Berlin' });
  expect(starts(weeks.json.points)).toEqual(['2024-01-10', '2024-01-15']);
  expect(values(weeks.json.points)).toEqual({ newSubscribers: [3 + BULK, 1], confirmed: [1, 0], unsubscribed: [1, 0] });
  const months = await report('busy', { fromDate: '2024-01-01', toDate: '2024-02-29', interval: 'MONTH', timeZone: 'Europe/Berlin' });
  expect(starts(months.json.points)).toEqual(['2024-01-01', '2024-02-01']);
  expect(values(months.json.points)).toEqual({ newSubscribers: [4 + BULK, 0], confirmed: [1, 1], unsubscribed: [1, 0] });
});

test('formattedValue in de-DE', async () => {
  const res = await report('busy', { fromDate: '2024-01-01', toDate: '2024-01-31', interval: 'MONTH' }, 'de-DE,de;q=0.9');
  expect(res.json.points[0].newSubscribers).toEqual({ value: 1238, formattedValue: '1.238' });
});

test('an account counts only its own subscribers', async () => {
  expect(values((await report('other', berlinDays)).json.points)).toEqual({ newSubscribers: [1, 0, 0], confirmed: [1, 0, 0], unsubscribed: [0, 0, 0] });
});

test.each([
  ['fromDate after toDate', { ...berlinDays, fromDate: '2024-01-13' }, 'report_period_invalid', 'body.fromDate'],
  ['an unknown time zone', { ...berlinDays, timeZone: 'Mars/Olympus_Mons' }, 'report_invalid_time_zone', 'body.timeZone'],
  ['more than 1,000 points', { fromDate: '2024-01-01', toDate: '2026-09-27', interval: 'DAY' }, 'report_too_many_points', 'body.interval'],
])('400 for %s', async (_name, body, errorId, detailPath) => {
  const res = await report('busy', body);
  expect({ status: res.status, errorId: res.json.errorId }).toEqual({ status: 400, errorId });
  expect(res.json.details.map((d: { path: string }) => d.path)).toContain(detailPath);
});

test('status changes through the running service are counted at the time they happen', async () => {
  const a = accounts.live.accountId;
  const client = createClient(subscriberV1.SubscriberServiceClient, subscriber!.address, 20_000);
  const signups = createClient(signupV1.SignupServiceClient, subscriber!.address, 20_000);
  try {
    const viaForm = await signups.signup({ accountId: a, email: 'form@example.org', valuesJson: '{}', topicIds: [], doubleOptIn: true, consentText: 'yes', formId: 'f', subscriberLimit: '0', consentGivenAt: '', eventId: '' });
    await signups.confirmSubscriber({ accountId: a, subscriberId: viaForm.subscriberId });
    await signups.confirmSubscriber({ accountId: a, subscriberId: viaForm.subscriberId }); // confirming twice counts once
    const add = (email: string, subscriberStatus: number) =>
      client.addSubscriber({ accountId: a, email, subscriberStatus, tags: [], topicIds: [], topicIdsGiven: false, fields: [] }).then((r) => r.subscriber!);
    const byHand = await add('hand@example.org', S.SUBSCRIBER_STATUS_UNCONFIRMED);
    await client.replaceSubscriberStatus({ accountId: a, subscriberId: byHand.id, subscriberStatus: S.SUBSCRIBER_STATUS_ACTIVE });
    const leaving = await add('leaving@example.org', S.SUBSCRIBER_STATUS_ACTIVE);
    await client.replaceSubscriberStatus({ accountId: a, subscriberId: leaving.id, subscriberStatus: S.SUBSCRIBER_STATUS_UNSUBSCRIBED });
    await add('never@example.org', S.SUBSCRIBER_STATUS_UNCONFIRMED);
  } finally {
    client.close();
    signups.close();
  }
  const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
  const res = await report('live', { fromDate: day(-1), toDate: day(1), interval: 'MONTH' });
  expect(res.status).toBe(200);
  const total = (m: (typeof METRICS)[number]) => res.json.points.reduce((sum: number, p: Record<string, { value: number }>) => sum + p[m].value, 0);
  expect({ newSubscribers: total('newSubscribers'), confirmed: total('confirmed'), unsubscribed: total('unsubscribed') }).toEqual({ newSubscribers: 4, confirmed: 2, unsubscribed: 1 });
});
