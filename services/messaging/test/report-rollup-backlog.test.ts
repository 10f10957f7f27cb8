import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseReportPeriod, reportBuckets } from '@mailer/reports';
import { openStore, type Store } from '@mailer/store';
import { countEvents } from '../src/automations/app/event-reports';
import { eventCollection, type EventDoc } from '../src/automations/store/events';
import { startReportRollUps } from '../src/mail/app/roll-up-reports';
import { messageCollections, type MessageCollections } from '../src/mail/store/messages';

// An event carries the time the gateway received it. Events that waited in the stream while the
// messaging service was stopped for days are recorded after the service starts; the report roll-up
// that also runs at start must not seal their days first, or reports over those days would miss them
// (a report reads a rolled-up day from its aggregates only).

const DAY = 86_400_000;
const today = Math.floor(Date.now() / DAY) * DAY;
let dir: string;
let store: Store;
let collections: MessageCollections;
let events: ReturnType<typeof eventCollection>;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'messaging-rollup-backlog-'));
  store = await openStore({ dataDir: dir });
  collections = messageCollections(store, { messageDays: 30, reportDays: 730 });
  events = eventCollection(store, 30);
});

afterEach(async () => {
  await store?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const threeDaysAgo = today - 3 * DAY + 10 * 3_600_000;
function event(id: string): EventDoc {
  const at = new Date(threeDaysAgo);
  return { _id: id, accountId: 'acct-a', eventKey: 'order.paid', email: `${id}@example.org`, occurredAt: at, receivedAt: at, propertiesJson: '{}', triggerAutomations: false, consent: null, subscriberId: null, outcome: 'RECORDED', runIds: [], matchedAutomationIds: [], recordedAt: new Date() };
}
const logs: Array<{ level: string; msg: string }> = [];
const logger = {
  info: () => undefined,
  warn: (_o: unknown, msg: string) => logs.push({ level: 'warn', msg }),
  error: (_o: unknown, msg: string) => logs.push({ level: 'error', msg }),
} as never;

const receivedThatDay = async () => {
  const day = new Date(threeDaysAgo).toISOString().slice(0, 10);
  const rows = await countEvents({ events, days: collections.days }, { accountId: 'acct-a', boundaries: reportBuckets(parseReportPeriod({ fromDate: day, toDate: day, interval: 'DAY', timeZone: 'UTC' })).boundaries });
  return rows.reduce((n, r) => n + r.received, 0);
};
const rolledUp = async () => (await collections.days.rollUps.findOne({ _id: 'events' }))?.through;
async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('the first roll-up waits until the events received while the service was stopped are recorded', async () => {
  let pending = 2; // the events consumer's lag: two events of three days ago still in the stream
  const rollUps = startReportRollUps({ store, messages: collections, events, reportRetentionDays: 730, now: () => new Date(), logger, backlog: async () => pending });
  try {
    // the consumer records them a moment later, after the roll-up started
    await new Promise((r) => setTimeout(r, 300));
    expect(await rolledUp()).toBeUndefined();
    await events.insertMany([event('e1'), event('e2')]);
    pending = 0;
    await until(async () => (await rolledUp()) !== undefined, 'the roll-up');
  } finally {
    await rollUps.stop();
  }
  expect(await receivedThatDay()).toBe(2);
  expect(logs).toEqual([]);
});

test('a backlog that does not drain delays the roll-up by the wait only, with a warning', async () => {
  const rollUps = startReportRollUps({ store, messages: collections, events, reportRetentionDays: 730, now: () => new Date(), logger, backlog: async () => 7, backlogWaitMs: 1_500 });
  try {
    await events.insertMany([event('e1')]);
    await until(async () => (await rolledUp()) !== undefined, 'the roll-up after the wait');
  } finally {
    await rollUps.stop();
  }
  expect(await receivedThatDay()).toBe(1);
  expect(logs).toEqual([{ level: 'warn', msg: 'report roll-up: the events backlog is not drained; rolling up anyway' }]);
});

test('stopping during the wait ends the round without rolling up', async () => {
  const rollUps = startReportRollUps({ store, messages: collections, events, reportRetentionDays: 730, now: () => new Date(), logger: { ...logger, warn: () => undefined } as never, backlog: async () => 1 });
  await new Promise((r) => setTimeout(r, 200));
  const t0 = Date.now();
  await rollUps.stop();
  expect(Date.now() - t0).toBeLessThan(2_000);
  expect(await rolledUp()).toBeUndefined();
});
