import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseReportPeriod, reportBuckets } from '@mailer/reports';
import { acrossAccounts, openStore, type Store } from '@mailer/store';
import { countEmails } from '../src/mail/app/email-reports';
import { countEvents } from '../src/automations/app/event-reports';
import { eventCollection, type EventDoc } from '../src/automations/store/events';
import { rollUpReports } from '../src/mail/app/roll-up-reports';
import { messageCollections, messagesOf, type MessageCollections } from '../src/mail/store/messages';
import { insertMessages, messageRecord } from './support/report-messages';

// Retention: message records go MESSAGE_RETENTION_DAYS after they were created (the embedded store's
// pruner, MongoDB's TTL index), and the email report keeps its numbers through the daily aggregates
// rolled up before; recorded events likewise (EVENT_RETENTION_DAYS) for the event report. Reports are taken before the roll-up, after it, and after the pruner removed the
// old records: the same numbers each time, in a zone whose midnight is at :30 UTC (Asia/Kolkata),
// over a period wholly before the pruning point and over one that spans it.

const DAY = 86_400_000;
const today = Math.floor(Date.now() / DAY) * DAY; // 00:00 UTC
const utc = (ms: number) => new Date(ms);
const isoDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const old = today - 100 * DAY;
let dir: string;
let store: Store;
let collections: MessageCollections;
let events: ReturnType<typeof eventCollection>;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'messaging-retention-'));
  await openWith(60_000);
  await insertMessages(messagesOf(collections, 'acct-a'), [
    // 100 days ago: 18:30 UTC is midnight in Kolkata (UTC+05:30)
    messageRecord('o1', { sentAt: utc(old + 18.5 * 3_600_000 - 1), deliveredAt: utc(old + 18.5 * 3_600_000), firstOpenedAt: utc(old + DAY + 60_000) }),
    messageRecord('o2', { sentAt: utc(old + 18.5 * 3_600_000), bouncedAt: utc(old + 19 * 3_600_000) }),
    messageRecord('o3', { sentAt: utc(old + 2 * DAY + 5 * 3_600_000 + 29 * 60_000), firstClickedAt: utc(old + 2 * DAY + 5 * 3_600_000 + 31 * 60_000), complainedAt: utc(old + 3 * DAY) }),
    ...Array.from({ length: 300 }, (_v, i) => messageRecord(`bulk-${i}`, { sentAt: utc(old + DAY + i * 7 * 60_000) })),
    // recent: rolled up but kept (3 days), and not rolled up yet (an hour ago)
    messageRecord('r1', { sentAt: utc(today - 3 * DAY + 3_600_000), firstOpenedAt: utc(today - 3 * DAY + 7_200_000) }),
    messageRecord('r2', { sentAt: utc(Date.now() - 3_600_000), deliveredAt: utc(Date.now() - 3_000_000) }),
  ]);
  await events.insertMany([
    event('e1', 'order.paid', old + 18.5 * 3_600_000 - 1),
    event('e2', 'order.paid', old + 18.5 * 3_600_000),
    event('e3', 'cart.left', old + 2 * DAY),
    event('e4', 'cart.left', today - 3 * DAY),
    event('e5', 'signup', Date.now() - 60_000),
  ]);
  await insertMessages(messagesOf(collections, 'acct-b'), [messageRecord('b1', { sentAt: utc(old + DAY), firstOpenedAt: utc(old + DAY) })]);
}, 60_000);

function event(id: string, eventKey: string, receivedAt: number): EventDoc {
  const at = new Date(receivedAt);
  return { _id: id, accountId: 'acct-a', eventKey, email: `${id}@example.org`, occurredAt: at, receivedAt: at, propertiesJson: '{}', triggerAutomations: false, consent: null, subscriberId: null, outcome: 'RECORDED', runIds: [], matchedAutomationIds: [], recordedAt: at };
}

afterAll(async () => {
  await store?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** (Re)opens the store; the pruner's first round comes one interval after the store opened. */
async function openWith(pruneIntervalMs: number): Promise<void> {
  await store?.close();
  store = await openStore({ dataDir: dir, pruneIntervalMs });
  collections = messageCollections(store, { messageDays: 30, reportDays: 730 });
  events = eventCollection(store, 30);
}

const deps = () => ({ messagesOf: (accountId: string) => messagesOf(collections, accountId) });
const report = (accountId: string, fromDate: string, toDate: string, interval: string) =>
  countEmails(deps(), { accountId, boundaries: reportBuckets(parseReportPeriod({ fromDate, toDate, interval, timeZone: 'Asia/Kolkata' })).boundaries });
const eventReport = (fromDate: string, toDate: string, interval: string) =>
  countEvents({ events, days: collections.days }, { accountId: 'acct-a', boundaries: reportBuckets(parseReportPeriod({ fromDate, toDate, interval, timeZone: 'Asia/Kolkata' })).boundaries });
const reports = () =>
  Promise.all([
    eventReport(isoDate(old - DAY), isoDate(old + 4 * DAY), 'DAY'),
    eventReport(isoDate(old - DAY), isoDate(today + DAY), 'MONTH'),
    report('acct-a', isoDate(old - DAY), isoDate(old + 4 * DAY), 'DAY'),
    report('acct-a', isoDate(old - DAY), isoDate(today + DAY), 'MONTH'),
    report('acct-a', isoDate(old), isoDate(today + DAY), 'YEAR'),
    report('acct-b', isoDate(old - DAY), isoDate(old + 4 * DAY), 'DAY'),
  ]);

function total(rows: Array<Record<string, number>>): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const row of rows) for (const [k, n] of Object.entries(row)) sum[k] = (sum[k] ?? 0) + n;
  return sum;
}

async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('a report over pruned records gives the numbers it gave before they were pruned', async () => {
  const before = await reports();
  const [eventsPerDay, eventsPerMonth, perDay, perMonth, perYear, other] = before;
  expect(eventsPerDay.map((d) => d.received)).toEqual([0, 1, 1, 1, 0, 0]);
  expect(eventsPerDay[1].byEventKey).toEqual({ 'order.paid': 1 });
  expect(eventsPerDay[3].byEventKey).toEqual({ 'cart.left': 1 });
  expect(eventsPerMonth.reduce((n, d) => n + d.received, 0)).toBe(5);
  // the old facts on their Kolkata days: o1 sent at 23:59:59.999, o2 at 00:00 of the next day
  const column = (metric: keyof (typeof perDay)[number]) => perDay.map((d) => d[metric]);
  expect(column('sent')).toEqual([0, 1, 1 + 159, 1 + 141, 0, 0]);
  expect(column('delivered')).toEqual([0, 0, 1, 0, 0, 0]);
  expect(column('opened')).toEqual([0, 0, 1, 0, 0, 0]);
  expect(column('bounced')).toEqual([0, 0, 1, 0, 0, 0]);
  expect(column('clicked')).toEqual([0, 0, 0, 1, 0, 0]);
  expect(column('complained')).toEqual([0, 0, 0, 0, 1, 0]);
  const all = { sent: 305, delivered: 2, opened: 2, clicked: 1, bounced: 1, complained: 1 };
  expect(total(perYear)).toEqual(all);
  expect(total(perMonth)).toEqual(all);
  expect(other[2]).toMatchObject({ sent: 1, opened: 1 });

  expect((await rollUpReports({ store, messages: collections, events, reportRetentionDays: 730, now: () => new Date() })).days).toBeGreaterThan(700);
  expect(await reports()).toEqual(before);

  // the pruner removes what is older than 30 days, and only that (a restart, with a short interval)
  await openWith(200);
  await until(async () => (await acrossAccounts(collections.messages).countDocuments({})) === 2, 'the old records to be pruned');
  expect((await acrossAccounts(collections.messages).find({}, { sort: { _id: 1 } })).map((m) => m._id)).toEqual(['r1', 'r2']);
  await until(async () => (await acrossAccounts(events).countDocuments({})) === 2, 'the old events to be pruned');
  expect(await reports()).toEqual(before);

  // a second roll-up finds nothing new and changes nothing
  expect((await rollUpReports({ store, messages: collections, events, reportRetentionDays: 730, now: () => new Date() })).days).toBe(0);
  expect(await reports()).toEqual(before);
});
