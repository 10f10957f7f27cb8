import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '@mailer/store';
import {
  createAccount,
  gatewaySecrets,
  serviceAddresses,
  startGateway,
  startNatsServer,
  startService,
  type GatewayHandle,
  type NatsServerHandle,
  type RunningService,
} from '@mailer/testing';
import { messageCollections, messagesOf } from '../src/mail/store/messages';
import { insertMessages, messageRecord } from './support/report-messages';

// POST /reports/emails through the real gateway and the real messaging process. The messaging
// store is seeded through the repository before the process starts on it (sending is another
// slice's), with facts on both sides of Europe/Berlin's spring DST change.

let nats: NatsServerHandle;
let messaging: RunningService | undefined;
let gateway: GatewayHandle | undefined;
let dataDir: string;
const keys: Record<'busy' | 'other' | 'empty', string> = { busy: '', other: '', empty: '' };
const BULK = 1234;

beforeAll(async () => {
  nats = await startNatsServer();
  const secrets = gatewaySecrets();
  // Accounts first (the seeded records name them); this gateway knows no messaging service yet.
  const first = await startGateway({ NATS_URL: nats.url, ...secrets, SUBSCRIBER_GRPC_ADDR: '127.0.0.1:1' });
  const accounts: Record<string, { accountId: string; apiKey: string }> = {};
  try {
    for (const name of ['busy', 'other', 'empty'] as const) {
      accounts[name] = await createAccount(first, `reports ${name}`);
      keys[name] = accounts[name].apiKey;
    }
  } finally {
    await first.stop();
  }

  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-messaging-reports-'));
  const store = await openStore({ dataDir: path.join(dataDir, 'messaging') }); // the service's store lives in DATA_DIR/<name>
  const c = messageCollections(store);
  const at = (iso: string) => new Date(iso);
  await insertMessages(messagesOf(c, accounts.busy.accountId), [
    // 2024-03-30 00:00 CET is 2024-03-29T23:00Z; 2024-03-31 lasts 23 hours (CEST from 02:00)
    messageRecord('m1', { sentAt: at('2024-03-29T23:00:00.000Z'), deliveredAt: at('2024-03-29T23:00:05.000Z'), firstOpenedAt: at('2024-03-31T21:59:59.999Z'), firstClickedAt: at('2024-03-31T22:00:00.000Z') }),
    messageRecord('m2', { sentAt: at('2024-03-29T22:59:59.999Z'), deliveredAt: at('2024-03-30T00:00:00.000Z') }), // sent on the 29th (local)
    messageRecord('m3', { sentAt: at('2024-03-31T00:30:00.000Z'), bouncedAt: at('2024-03-31T01:30:00.000Z'), complainedAt: at('2024-04-01T21:59:59.000Z') }),
    messageRecord('m4', { sentAt: at('2024-04-01T22:00:00.000Z') }), // 2024-04-02 00:00 CEST
    messageRecord('m5', { sentAt: at('2024-04-01T08:00:00.000Z'), machineOpenCount: 2, machineClickCount: 1 }), // machine activity only
    ...Array.from({ length: BULK }, (_v, i) => messageRecord(`bulk-${i}`, { sentAt: new Date(Date.parse('2024-04-01T10:00:00.000Z') + i * 1000) })),
  ]);
  await insertMessages(messagesOf(c, accounts.other.accountId), [messageRecord('o1', { sentAt: at('2024-03-30T12:00:00.000Z'), deliveredAt: at('2024-03-30T12:00:01.000Z') })]);
  await store.close();

  // records of 2024 are kept (and rolled up into the daily aggregates at start, which the reports
  // then read: the numbers below are those of the aggregates)
  messaging = await startService('messaging', { NATS_URL: nats.url, DATA_DIR: dataDir, MESSAGE_RETENTION_DAYS: '36500', REPORT_RETENTION_DAYS: '36500' });
  gateway = await startGateway({ NATS_URL: nats.url, ...secrets, SUBSCRIBER_GRPC_ADDR: '127.0.0.1:1', ...serviceAddresses([messaging]) });
}, 180_000);

afterAll(async () => {
  await gateway?.stop();
  await messaging?.stop();
  await nats?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

async function report(account: keyof typeof keys, body: unknown, acceptLanguage?: string) {
  const res = await fetch(`${gateway!.url}/reports/emails`, {
    method: 'POST',
    headers: { 'x-api-key': keys[account], 'content-type': 'application/json', ...(acceptLanguage !== undefined ? { 'accept-language': acceptLanguage } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

const METRICS = ['sent', 'delivered', 'opened', 'clicked', 'bounced', 'complained'] as const;
/** The points' values, metric by metric. */
const values = (points: Array<Record<string, { value: number }>>) => Object.fromEntries(METRICS.map((m) => [m, points.map((p) => p[m].value)]));

const berlinDays = { fromDate: '2024-03-30', toDate: '2024-04-01', interval: 'DAY', timeZone: 'Europe/Berlin' };

test('counts per local day across the DST change, each metric by its fact time; machine opens never count', async () => {
  const res = await report('busy', berlinDays);
  expect(res.status).toBe(200);
  expect(res.json.points.map((p: { periodStart: string }) => p.periodStart)).toEqual(['2024-03-30', '2024-03-31', '2024-04-01']);
  expect(values(res.json.points)).toEqual({
    sent: [1, 1, BULK + 1],
    delivered: [2, 0, 0],
    opened: [0, 1, 0],
    clicked: [0, 0, 1],
    bounced: [0, 1, 0],
    complained: [0, 0, 1],
  });
  expect(res.json.points[2].sent).toEqual({ value: 1235, formattedValue: '1,235' }); // en-US by default
  expect(Object.keys(res.json.points[0]).sort()).toEqual(['periodStart', ...METRICS].sort());
});

test.each([
  ['de-DE', '1.235'],
  ['de-DE,de;q=0.9,en;q=0.8', '1.235'],
  ['en;q=0.1, de;q=0.5', '1.235'],
  ['en-US', '1,235'],
  ['xx-YY, !!garbage', '1,235'],
])('formattedValue follows Accept-Language %j', async (acceptLanguage, formatted) => {
  const res = await report('busy', berlinDays, acceptLanguage);
  expect(res.status).toBe(200);
  expect(res.json.points[2].sent).toEqual({ value: 1235, formattedValue: formatted });
  expect(res.json.points[0].sent).toEqual({ value: 1, formattedValue: '1' });
});

test('ISO weeks from Monday in the zone, the first clamped to fromDate', async () => {
  const res = await report('busy', { fromDate: '2024-03-27', toDate: '2024-04-02', interval: 'WEEK', timeZone: 'Europe/Berlin' });
  expect(res.status).toBe(200);
  expect(res.json.points.map((p: { periodStart: string }) => p.periodStart)).toEqual(['2024-03-27', '2024-04-01']);
  expect(values(res.json.points).sent).toEqual([3, BULK + 2]);
});

test('the same instants read in UTC fall on other days', async () => {
  const res = await report('busy', { fromDate: '2024-03-30', toDate: '2024-04-01', interval: 'DAY' });
  expect(values(res.json.points).sent).toEqual([0, 1, BULK + 2]); // m1 and m2 are on the 29th in UTC, m4 on the 1st
});

test('an account sees only its own messages; an empty account gets every bucket with zeros', async () => {
  expect(values((await report('other', berlinDays)).json.points)).toEqual({
    sent: [1, 0, 0],
    delivered: [1, 0, 0],
    opened: [0, 0, 0],
    clicked: [0, 0, 0],
    bounced: [0, 0, 0],
    complained: [0, 0, 0],
  });
  const empty = await report('empty', { fromDate: '2024-01-15', toDate: '2024-04-10', interval: 'MONTH', timeZone: 'America/New_York' }, 'de-DE');
  expect(empty.status).toBe(200);
  const zero = { value: 0, formattedValue: '0' };
  expect(empty.json).toEqual({
    points: ['2024-01-15', '2024-02-01', '2024-03-01', '2024-04-01'].map((periodStart) => ({ periodStart, sent: zero, delivered: zero, opened: zero, clicked: zero, bounced: zero, complained: zero })),
  });
});

test('1,000 points are answered, 1,001 are refused', async () => {
  const ok = await report('busy', { fromDate: '2024-01-01', toDate: '2026-09-26', interval: 'DAY', timeZone: 'Europe/Berlin' });
  expect(ok.status).toBe(200);
  expect(ok.json.points).toHaveLength(1000);
  expect(ok.json.points[91]).toMatchObject({ periodStart: '2024-04-01', sent: { value: 1235 } });
  const tooMany = await report('busy', { fromDate: '2024-01-01', toDate: '2026-09-27', interval: 'DAY' });
  expect(tooMany.status).toBe(400);
  expect(tooMany.json.errorId).toBe('report_too_many_points');
});

test.each([
  ['fromDate after toDate', { ...berlinDays, fromDate: '2024-04-02' }, 'report_period_invalid', 'body.fromDate'],
  ['a day that does not exist', { ...berlinDays, fromDate: '2023-02-29' }, 'report_period_invalid', 'body.fromDate'],
  ['a date-time instead of a date', { ...berlinDays, toDate: '2024-04-01T00:00:00Z' }, 'report_period_invalid', 'body.toDate'],
  ['an unknown interval', { ...berlinDays, interval: 'HOUR' }, 'report_period_invalid', 'body.interval'],
  ['an unknown time zone', { ...berlinDays, timeZone: 'Mars/Olympus_Mons' }, 'report_invalid_time_zone', 'body.timeZone'],
  ['a fixed offset as time zone', { ...berlinDays, timeZone: '+01:00' }, 'report_invalid_time_zone', 'body.timeZone'],
  ['more than 1,000 weeks', { fromDate: '2000-01-01', toDate: '2024-01-01', interval: 'WEEK' }, 'report_too_many_points', 'body.interval'],
  ['no interval', { fromDate: '2024-01-01', toDate: '2024-01-02' }, 'validation_failed', 'body.interval'],
  ['an unknown member', { ...berlinDays, granularity: 'DAY' }, 'unknown_property', 'body.granularity'],
])('400 for %s', async (_name, body, errorId, detailPath) => {
  const res = await report('busy', body);
  expect({ status: res.status, errorId: res.json.errorId }).toEqual({ status: 400, errorId });
  expect(typeof res.json.message).toBe('string');
  expect(res.json.details.map((d: { path: string }) => d.path)).toContain(detailPath);
});

test('without a key: 401, nothing counted', async () => {
  const res = await fetch(`${gateway!.url}/reports/emails`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(berlinDays) });
  expect(res.status).toBe(401);
});

// Last: it stops the messaging service.
test('the messaging service down: 503 service_unavailable naming it, a bad period still 400 (checked before any call)', async () => {
  await messaging!.stop();
  messaging = undefined;
  const res = await report('busy', berlinDays);
  expect(res.status).toBe(503);
  expect(res.json.errorId).toBe('service_unavailable');
  expect(res.json.message).toContain('messaging');
  expect(res.json.message).not.toMatch(/127\.0\.0\.1|:\d{4,5}/);
  expect((await report('busy', { ...berlinDays, timeZone: 'Nowhere/City' })).json.errorId).toBe('report_invalid_time_zone');
}, 30_000);
