// Per-collection declarations (CollectionOptions): retention (`expireAfter`: MongoDB's TTL index, the
// embedded engine's pruner) and kept counts (`countBy`).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { acrossAccounts, mongoose, openStore, type Store } from '../src';
import { collectionSchema } from '../src/schema';

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
