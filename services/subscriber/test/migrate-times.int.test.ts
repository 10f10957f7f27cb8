// Issue 10: a data directory written by the build that stored times as ISO strings (in the files of
// the previous embedded engine: issue 25). The real subscriber process starts on it, imports the
// files into SQLite (one log line per collection), converts every string time to a Date before it
// listens (one log line per collection), and answers with the same ISO strings as before; rows the
// new build writes (Dates) sort, page and count together with the converted ones; a second start
// converts nothing, and the starts after it skip the migration's pass.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { createClient } from '@mailer/kit';
import { subscriberReportsV1, subscriberV1 } from '@mailer/proto';
import { openStore, type Store } from '@mailer/store';
import { encodeRecord, type JournalOp } from '@mailer/store/dist/codec';
import { startNatsServer, startService, type NatsServerHandle, type RunningService } from '@mailer/testing';
import { add, eventsOf, S, type Client } from './support';
import { defaultTopicId } from '../src/app/default-topic';
import { fieldSchema, tagSchema, topicSchema } from '../src/store/catalog';
import { subscriberRepository, subscriberSchema, type SubscriberDoc } from '../src/store/subscribers';
import { uuid } from './helpers';

const A = '00000000-0000-4000-8000-00000000a001';
const OLD = 1500; // more than one conversion batch (1,000)
const NEW = 500;
const HOUR = 3_600_000;
const T0 = Date.parse('2024-01-01T00:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();
// old rows at even hours from T0, rows of the new build at odd hours: the two interleave in time
const oldAt = (i: number) => iso(T0 + 2 * i * HOUR);
const newAt = (i: number) => iso(T0 + (2 * i + 1) * HOUR);
const oldId = (i: number) => uuid(100_000 + i);
const newId = (i: number) => uuid(200_000 + i);
const NEWS = uuid(300_001);
const TAG = uuid(300_002);
const FIELD = uuid(300_003);
const GONE = uuid(300_004);

let dataDir: string;
let nats: NatsServerHandle;
let nc: NatsConnection;
let svc: RunningService | undefined;
let client: Client | undefined;


/** The subscriber documents of the old build: registeredAt, updatedAt, consent.at and optOuts[].at as ISO strings. */
function oldSubscriber(i: number): Record<string, unknown> {
  return {
    _id: oldId(i),
    accountId: A,
    email: `old-${i}@example.org`,
    firstName: null,
    status: i % 10 === 0 ? 'UNCONFIRMED' : 'ACTIVE',
    tags: [TAG],
    topicIds: i % 2 ? [NEWS] : undefined,
    ...(i % 2 ? {} : { optOuts: [{ topicId: NEWS, at: iso(T0 + 2 * i * HOUR + 60_000), source: 'api' }] }),
    ...(i % 3 === 0 ? { consent: { text: 'Yes please', eventId: uuid(400_000 + i), at: iso(T0 + 2 * i * HOUR - 1) } } : {}),
    // the old build already wrote these two as Dates
    ...(i % 10 === 1 ? { confirmedAt: new Date(T0 + 2 * i * HOUR + 5000) } : {}),
    registeredAt: oldAt(i),
    updatedAt: oldAt(i),
    version: 1,
  };
}

/**
 * The data directory as that build left it: the previous embedded engine's files (a snapshot, then a
 * journal of whole-document records, codec.ts), which the store imports into SQLite at the first start.
 */
function writeOldDataDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  const line = (collection: string, docs: Record<string, unknown>[]) => encodeRecord(docs.map((d): JournalOp => [collection, d._id as string, d]));
  const snapshot = [
    line('topics', [
      { _id: defaultTopicId(A), accountId: A, label: 'General', description: null, active: true, isDefault: true, createdAt: '2023-12-01T08:00:00.000Z', updatedAt: '2023-12-01T08:00:00.000Z' },
      { _id: NEWS, accountId: A, label: 'News', description: null, active: true, isDefault: false, createdAt: '2023-12-02T08:00:00.123Z', updatedAt: '2023-12-03T08:00:00.000Z' },
    ]),
    line('tags', [{ _id: TAG, accountId: A, name: 'Imported', nameKey: 'imported', createdAt: '2023-12-04T08:00:00.456Z' }]),
    line('fields', [{
      _id: FIELD, accountId: A, label: 'Company', personalizationTagName: 'company', fieldType: 'TEXT', required: false, internal: false, active: true, position: 10, options: [],
      createdAt: '2023-12-05T08:00:00.000Z', updatedAt: '2023-12-06T08:00:00.000Z',
    }]),
    line('subscribers', [{ ...oldSubscriber(OLD), _id: GONE, email: 'gone@example.org' }]),
  ];
  const journal: string[] = [];
  for (let b = 0; b < OLD; b += 500) journal.push(line('subscribers', Array.from({ length: Math.min(500, OLD - b) }, (_v, k) => oldSubscriber(b + k))));
  journal.push(encodeRecord([['subscribers', GONE, null]])); // deleted later: not imported
  fs.writeFileSync(path.join(dir, 'snapshot.jsonl'), snapshot.join(''));
  fs.writeFileSync(path.join(dir, 'journal.jsonl'), journal.join(''));
}

/** The service's store, opened with the service's own schemas (the service must be stopped: the directory is locked). */
async function withServiceStore<R>(fn: (store: Store) => Promise<R>): Promise<R> {
  const store = await openStore({ dataDir: path.join(dataDir, 'subscriber') });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

async function start(): Promise<RunningService> {
  svc = await startService('subscriber', { NATS_URL: nats.url, DATA_DIR: dataDir, FIELD_USAGE_DEADLINE_MS: '1000' });
  client = createClient(subscriberV1.SubscriberServiceClient, svc.address, 20_000);
  return svc;
}

async function stop(): Promise<void> {
  client?.close();
  client = undefined;
  await svc?.stop();
  svc = undefined;
}

/** The migration's log lines of one start: collection -> { found, converted }. */
function migrationLog(s: RunningService): Record<string, { found: number; converted: number }> {
  const lines = s.output().split('\n').filter((l) => l.includes('string times converted to dates'));
  return Object.fromEntries(lines.map((l) => JSON.parse(l)).map((l) => [l.collection, { found: l.found, converted: l.converted }]));
}

/** Every subscriber of the account in list order, page by page. */
async function allPages(pageSize: number): Promise<subscriberV1.SubscriberOverview[]> {
  const out: subscriberV1.SubscriberOverview[] = [];
  for (let page = 1; ; page++) {
    const res = await client!.listSubscribers({ accountId: A, pageNumber: page, pageSize, status: S.SUBSCRIBER_STATUS_UNSPECIFIED });
    out.push(...res.items);
    if (res.items.length < pageSize) return out;
  }
}

async function countPerDay(days: number): Promise<subscriberReportsV1.SubscriberCounts[]> {
  const reports = createClient(subscriberReportsV1.SubscriberReportServiceClient, svc!.address, 20_000);
  try {
    const boundaries = Array.from({ length: days + 1 }, (_v, d) => iso(T0 + d * 24 * HOUR));
    return (await reports.countSubscribers({ accountId: A, boundaries })).buckets;
  } finally {
    reports.close();
  }
}

beforeAll(async () => {
  nats = await startNatsServer();
  nc = await connect({ servers: nats.url, ...nats.auth });
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-subscriber-times-'));
  writeOldDataDir(path.join(dataDir, 'subscriber')); // the service's store lives in DATA_DIR/<name>
}, 60_000);

afterAll(async () => {
  await stop();
  await nc?.close();
  await nats?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

test('the first start converts every string time before it listens, and the API shows the same ISO strings', async () => {
  const started = Date.now();
  const s = await start();
  const imported = s.output().split('\n').filter((l) => l.includes("imported a collection from the previous engine's data files")).map((l) => JSON.parse(l));
  expect(Object.fromEntries(imported.map((l) => [l.collection, l.documents]))).toEqual({ topics: 2, tags: 1, fields: 1, subscribers: OLD });
  expect(fs.readdirSync(path.join(dataDir, 'subscriber')).filter((f) => f.endsWith('.jsonl'))).toEqual([]); // kept aside as *.jsonl.imported
  const log = migrationLog(s);
  expect(log).toEqual({
    subscribers: { found: OLD, converted: OLD },
    fields: { found: 1, converted: 1 },
    tags: { found: 1, converted: 1 },
    topics: { found: 2, converted: 2 },
  });
  console.log(`first start on ${OLD} old subscribers: ready after ${Date.now() - started} ms`); // eslint-disable-line no-console

  const c = client!;
  const got = (await c.getSubscriber({ accountId: A, subscriberId: oldId(6) })).subscriber!;
  expect(got.registeredAt).toBe(oldAt(6));
  expect(got.gdprAgreement).toBe(`Yes please (given ${iso(T0 + 12 * HOUR - 1)})`);
  const topics = (await c.getSubscriberTopics({ accountId: A, subscriberId: oldId(6) })).topics;
  expect(topics.find((t) => t.topicId === NEWS)).toMatchObject({ optedOut: true, optedOutAt: iso(T0 + 12 * HOUR + 60_000), optOutSource: 'api' });
  expect((await c.listTags({ accountId: A })).items.map((t) => [t.id, t.createdAt])).toEqual([[TAG, '2023-12-04T08:00:00.456Z']]);
  expect((await c.listTopics({ accountId: A })).items.map((t) => [t.id, t.createdAt])).toEqual([
    [defaultTopicId(A), '2023-12-01T08:00:00.000Z'],
    [NEWS, '2023-12-02T08:00:00.123Z'],
  ]);

  // a change to a converted subscriber: its fact carries the times exactly as the old build wrote them
  await c.replaceSubscriberStatus({ accountId: A, subscriberId: oldId(0), subscriberStatus: S.SUBSCRIBER_STATUS_ACTIVE });
  const events = await eventsOf(nc, A, (es) => es.some((e) => e.type === 'subscriber.updated' && e.subscriber?.id === oldId(0)));
  const fact = events.find((e) => e.type === 'subscriber.updated' && e.subscriber?.id === oldId(0))!;
  expect(fact.subscriber!.registeredAt).toBe(oldAt(0));
  expect(fact.subscriber!.optOuts).toEqual([{ topicId: NEWS, at: iso(T0 + 60_000), source: 'api' }]);

  // a subscriber added now sorts after every old one
  const fresh = await add(c, A, 'fresh@example.org');
  const pages = await allPages(400);
  expect(pages).toHaveLength(OLD + 1);
  expect(pages.slice(0, 3).map((p) => p.registeredAt)).toEqual([oldAt(0), oldAt(1), oldAt(2)]);
  expect(pages[OLD].id).toBe(fresh.id);
  await stop();

  // in storage: Dates, not strings
  await withServiceStore(async (store) => {
    const doc = await store.collection<SubscriberDoc>('subscribers', subscriberSchema).findOne({ accountId: A, _id: oldId(6) });
    expect(doc!.registeredAt).toEqual(new Date(oldAt(6)));
    expect(doc!.updatedAt).toBeInstanceOf(Date);
    expect(doc!.consent!.at).toEqual(new Date(T0 + 12 * HOUR - 1));
    expect(doc!.optOuts![0].at).toEqual(new Date(T0 + 12 * HOUR + 60_000));
    const confirmed = await store.collection<SubscriberDoc>('subscribers', subscriberSchema).findOne({ accountId: A, _id: oldId(0) });
    expect(confirmed!.confirmedAt).toBeInstanceOf(Date); // confirmed just now, through the service
    for (const [name, schema] of [['tags', tagSchema], ['topics', topicSchema], ['fields', fieldSchema]] as const) {
      for (const d of await store.collection<any>(name, schema).find({ accountId: A })) expect(d.createdAt).toBeInstanceOf(Date); // eslint-disable-line @typescript-eslint/no-explicit-any
    }
  });
}, 120_000);

test('rows of the new build interleave with converted ones in list order, pages and report counts; a second start converts nothing', async () => {
  // written by the new build's repository (Dates, the status counters kept), registered between the old rows
  await withServiceStore(async (store) => {
    const inserts = Array.from({ length: NEW }, (_v, i) => ({ id: newId(i), email: `new-${i}@example.org`, firstName: null, status: 'ACTIVE' as const, tags: [], topicIds: [], optOuts: [], fields: {}, registeredAt: newAt(i), version: 1 }));
    await store.transaction((tx) => subscriberRepository(store).write(tx, A, { inserts }, new Date().toISOString()));
  });

  const s = await start();
  const log = migrationLog(s);
  expect(Object.keys(log).sort()).toEqual(['fields', 'subscribers', 'tags', 'topics']);
  for (const entry of Object.values(log)) expect(entry).toEqual({ found: 0, converted: 0 });

  // list order is by time across both: old 0, new 0, old 1, new 1, ... then the old rows past the new ones, then today's
  const expected = [...Array.from({ length: OLD }, (_v, i) => ({ id: oldId(i), at: oldAt(i) })), ...Array.from({ length: NEW }, (_v, i) => ({ id: newId(i), at: newAt(i) }))]
    .sort((x, y) => (x.at < y.at ? -1 : x.at > y.at ? 1 : 0));
  const pages = await allPages(150); // 14 pages: the later ones are read backwards from the end
  expect(pages).toHaveLength(OLD + NEW + 1);
  expect(pages.slice(0, OLD + NEW).map((p) => ({ id: p.id, at: p.registeredAt }))).toEqual(expected);
  expect(pages.slice(0, 4).map((p) => p.id)).toEqual([oldId(0), newId(0), oldId(1), newId(1)]);
  expect(pages[OLD + NEW].email).toBe('fresh@example.org');

  // per UTC day: 12 old (even hours) + 12 new (odd hours) registrations; 1 in 10 old rows confirmed 5 s after registering
  const days = await countPerDay(3);
  expect(days.map((d) => Number(d.newSubscribers))).toEqual([24, 24, 24]);
  expect(days.map((d) => Number(d.confirmed))).toEqual([2, 1, 1]); // old rows 1 and 11 (day 1), 21 and 31 (days 2 and 3)
  const late = await countPerDay(60); // the new rows end on the 42nd day (8 of them: the 500th odd hour is 999)
  expect(late.map((d) => Number(d.newSubscribers))).toEqual([...Array(41).fill(24), 12 + 8, ...Array(18).fill(12)]);

  // that start found nothing left: the starts after it skip the pass (it reads every subscriber)
  await stop();
  const third = await start();
  expect(migrationLog(third)).toEqual({});
  expect(third.output().split('\n').filter((l) => l.includes('string times: already converted'))).toHaveLength(4);
  expect(await allPages(150)).toHaveLength(OLD + NEW + 1);
}, 120_000);
