// Per-collection declarations (CollectionOptions): retention (`expireAfter`: MongoDB's TTL index, the
// embedded engine's pruner) and kept counts (`countBy`).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { acrossAccounts, mongoose, openStore, type Store } from '../src';
import { collectionSchema } from '../src/schema';
import type { SqliteCollection } from '../src/sqlite/collection';
import type { SqliteStore } from '../src/sqlite/store';

interface Log {
  _id: string;
  accountId: string;
  kind?: string;
  at?: Date | null;
}

const schema = new mongoose.Schema({ _id: String, accountId: { type: String, required: true }, kind: String, at: Date }, { versionKey: false });
const DAY = 86_400_000;
const dirs: string[] = [];
const stores: Store[] = [];

async function open(pruneIntervalMs = 60_000): Promise<{ store: Store; dir: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-retention-'));
  dirs.push(dir);
  const store = await openStore({ dataDir: dir, pruneIntervalMs });
  stores.push(store);
  return { store, dir };
}

afterAll(async () => {
  for (const s of stores) await s.close().catch(() => undefined);
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('expireAfter: the pruner removes documents older than the days, in batches, and keeps those without a date', async () => {
  const { store } = await open(100);
  const logs = store.collection<Log>('logs', schema, { expireAfter: { path: 'at', days: 30 } });
  const now = Date.now();
  await logs.insertMany(Array.from({ length: 1_234 }, (_, i) => ({ _id: `old-${i}`, accountId: 'a', at: new Date(now - 31 * DAY - i * 1000) })));
  await logs.insertMany([
    { _id: 'young', accountId: 'a', at: new Date(now - 29 * DAY) },
    { _id: 'undated', accountId: 'a' },
    { _id: 'null', accountId: 'a', at: null },
  ]);
  await until(async () => (await acrossAccounts(logs).countDocuments({})) === 3, 'the expired documents to go');
  expect((await acrossAccounts(logs).find({}, { sort: { _id: 1 } })).map((d) => d._id)).toEqual(['null', 'undated', 'young']);
});

test('expireAfter: opening a collection again with other options is refused; bad declarations are refused', async () => {
  const { store } = await open();
  store.collection<Log>('logs', schema, { expireAfter: { path: 'at', days: 30 } });
  expect(() => store.collection<Log>('logs', schema, { expireAfter: { path: 'at', days: 31 } })).toThrow(/other options/);
  expect(() => store.collection<Log>('logs2', schema, { expireAfter: { path: 'kind', days: 30 } })).toThrow(/Date path/);
  expect(() => store.collection<Log>('logs3', schema, { expireAfter: { path: 'at', days: 0 } })).toThrow(/positive/);
});

test('expireAfter is a TTL index of the schema MongoDB gets (the same declaration)', () => {
  const indexes = collectionSchema('logs', schema, { expireAfter: { path: 'at', days: 30 } }).indexes();
  expect(indexes).toContainEqual([{ at: 1 }, expect.objectContaining({ expireAfterSeconds: 30 * 86_400 })]);
  expect(schema.indexes()).toEqual([]); // the declared schema itself is left as it was
});

test('countBy: the kept count of a value follows inserts, updates, deletes and rolled-back transactions, and survives reopening', async () => {
  const { store, dir } = await open();
  const logs = store.collection<Log>('logs', schema, { countBy: 'accountId' });
  await logs.insertMany(Array.from({ length: 50 }, (_, i) => ({ _id: `l${i}`, accountId: i % 5 === 0 ? 'b' : 'a' })));
  expect(await logs.countDocuments({ accountId: 'a' })).toBe(40);
  await logs.updateMany({ _id: { $in: ['l1', 'l2'] } }, { $set: { accountId: 'b' } });
  await logs.deleteOne({ _id: 'l3' });
  await store
    .transaction(async (tx) => {
      await logs.insertOne({ _id: 'tx', accountId: 'a' }, { tx });
      throw new Error('rolled back');
    })
    .catch(() => undefined);
  expect(await logs.countDocuments({ accountId: 'a' })).toBe(37);
  expect(await logs.countDocuments({ accountId: 'b' })).toBe(12);
  expect(await logs.countDocuments({ accountId: 'none' })).toBe(0);
  await store.close();
  const again = await openStore({ dataDir: dir });
  stores.push(again);
  expect(await again.collection<Log>('logs', schema, { countBy: 'accountId' }).countDocuments({ accountId: 'a' })).toBe(37);
});

test('countBy with a key of several paths: counts per combination follow every write, are read instead of counted, and go when no longer declared', async () => {
  const { store, dir } = await open();
  const byKind = { countBy: ['accountId', ['accountId', 'kind']] } as const;
  const logs = store.collection<Log>('logs', schema, byKind) as SqliteCollection<Log>;
  await logs.insertMany(Array.from({ length: 60 }, (_, i) => ({ _id: `l${i}`, accountId: i % 2 ? 'a' : 'b', kind: i % 3 ? 'sent' : 'bounced' })));
  await logs.updateMany({ accountId: 'a', kind: 'bounced' }, { $set: { kind: 'sent' } }); // 10 move
  await logs.updateOne({ _id: 'l1' }, { $set: { accountId: 'b' } });
  await logs.deleteMany({ accountId: 'b', kind: 'bounced' });
  const expected = async (filter: Partial<Log>) => (await logs.find({})).filter((d) => Object.entries(filter).every(([k, v]) => d[k as keyof Log] === v)).length;
  for (const filter of [{ accountId: 'a', kind: 'sent' }, { accountId: 'a', kind: 'bounced' }, { accountId: 'b', kind: 'sent' }, { accountId: 'b', kind: 'bounced' }, { accountId: 'c', kind: 'sent' }]) {
    expect(await logs.countDocuments(filter)).toBe(await expected(filter));
  }
  expect(await logs.countDocuments({ accountId: 'a', kind: 'sent' })).toBe(29);
  const countSql = (s: Store, c: SqliteCollection<Log>, filter: Partial<Log>) => c.table.countQuery((s as SqliteStore).reader(c.table)!, filter).sql;
  expect(countSql(store, logs, { accountId: 'a', kind: 'sent' })).toMatch(/FROM "logs\.counts\.accountId_kind" WHERE k0 = \? AND k1 = \?/);
  expect(countSql(store, logs, { accountId: 'a' })).toMatch(/FROM "logs\.counts" WHERE k = \?/);
  await store.close();

  // reopened with the single key only: the combination's table and triggers go, the account's stays
  const again = await openStore({ dataDir: dir });
  stores.push(again);
  const plain = again.collection<Log>('logs', schema, { countBy: 'accountId' }) as SqliteCollection<Log>;
  expect(await plain.countDocuments({ accountId: 'a' })).toBe(29);
  expect(countSql(again, plain, { accountId: 'a', kind: 'sent' })).not.toMatch(/counts/);
  await plain.insertOne({ _id: 'new', accountId: 'a', kind: 'sent' }); // no trigger of the dropped table left to fail
  expect(await plain.countDocuments({ accountId: 'a', kind: 'sent' })).toBe(30);
});
