// The embedded engine's long reads: a count, an unbounded find, an aggregation or a scan over many
// rows gives the event loop turns while it runs (other requests of the process are answered in the
// meantime, not after it), holds one batch of documents at a time, and never keeps the reader on an
// old snapshot. Proved by what happens during the read (turns of the loop, a point read answered
// before the long one), not by timing.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { acrossAccounts, mongoose, openStore, Store } from '../src';
import type { SqliteCollection } from '../src/sqlite/collection';
import type { SqliteStore } from '../src/sqlite/store';

interface Contact {
  _id: string;
  accountId: string;
  email: string;
  n: number;
  at: Date;
  tags: string[];
}

const schema = new mongoose.Schema(
  { _id: String, accountId: { type: String, required: true }, email: String, n: Number, at: Date, tags: [String] },
  { versionKey: false },
);
schema.index({ accountId: 1, n: 1 });

const ROWS = 40_000;
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 1);
let dir: string;
let store: Store;

const contact = (i: number): Contact => ({
  _id: `c${String(i).padStart(6, '0')}`,
  accountId: i % 10 === 0 ? 'other' : 'acc',
  email: `reader${i}@example.com`,
  n: i % 97,
  at: new Date(T0 + (i % 30) * DAY + i),
  tags: i % 3 === 0 ? ['vip'] : [],
});
const mine = Array.from({ length: ROWS }, (_, i) => contact(i)).filter((c) => c.accountId === 'acc');

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-streaming-'));
  store = await openStore({ dataDir: dir });
  const c = store.collection<Contact>('contacts', schema);
  for (let i = 0; i < ROWS; i += 5000) await c.insertMany(Array.from({ length: 5000 }, (_, k) => contact(i + k)));
}, 120_000);

afterAll(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * Runs `read`, counting the turns of the event loop meanwhile, and issues a point read once it has
 * started: with a long read that held the loop, the point read would only come back after it.
 */
async function during<R>(read: () => Promise<R>): Promise<{ result: R; turns: number; pointReadFirst: boolean }> {
  const c = store.collection<Contact>('contacts', schema);
  let turns = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  let longDone = false;
  const long = read().then((r) => ((longDone = true), r));
  await new Promise((r) => setImmediate(r));
  const pointReadFirst = await c.findOne({ _id: 'c000001' }).then((found) => found !== null && !longDone);
  const result = await long;
  running = false;
  return { result, turns, pointReadFirst };
}

// a regular expression other than a literal text is tested in JavaScript: every row of the account is decoded and tested
const JS_PATTERN = /7@ex.mple/;
const jsFilter = { accountId: 'acc', email: { $regex: JS_PATTERN } };
const expectedJs = mine.filter((c) => JS_PATTERN.test(c.email));

test('a count tested in JavaScript over many rows lets other reads through while it runs', async () => {
  const c = store.collection<Contact>('contacts', schema);
  const { result, turns, pointReadFirst } = await during(() => c.countDocuments(jsFilter));
  expect(result).toBe(expectedJs.length);
  expect(pointReadFirst).toBe(true);
  expect(turns).toBeGreaterThan(3);
});

test('a count SQLite evaluates on the stored documents (no index answers it) is sliced too', async () => {
  const c = store.collection<Contact>('contacts', schema);
  const { result, turns, pointReadFirst } = await during(() => c.countDocuments({ accountId: 'acc', email: { $gte: 'reader5' } }));
  expect(result).toBe(mine.filter((x) => x.email >= 'reader5').length);
  expect(pointReadFirst).toBe(true);
  expect(turns).toBeGreaterThan(3);
});

test('a count over an account holding most of the table walks it in chunks SQLite counts: the loop turns, and a write committed meanwhile is not counted', async () => {
  const walked = store.collection<Contact>('walked', schema, { countBy: 'accountId' }) as SqliteCollection<Contact>;
  for (let i = 0; i < 60_000; i += 10_000) await walked.insertMany(Array.from({ length: 10_000 }, (_, k) => contact(i + k)));
  const filter = { accountId: 'acc', email: { $gte: 'reader5' } };
  const expected = Array.from({ length: 60_000 }, (_, i) => contact(i)).filter((x) => x.accountId === 'acc' && x.email >= 'reader5').length;
  const planned = (f: object) => walked.table.countQuery((store as SqliteStore).reader(walked.table)!, f);
  expect(planned(filter).chunked).toBeDefined(); // 'acc' holds 90% of the rows (its kept count says so)
  expect(planned({ ...filter, accountId: 'other' }).chunked).toBeUndefined(); // 10%: its index range, row by row
  const { result, turns, pointReadFirst } = await during(async () => {
    const counting = walked.countDocuments(filter);
    await new Promise((r) => setImmediate(r));
    await walked.insertMany(Array.from({ length: 50 }, (_, k) => ({ ...contact(k), _id: `late${k}`, email: 'reader9-late@example.com' })));
    return counting;
  });
  expect(result).toBe(expected); // one committed state: the one the count started on
  expect(pointReadFirst).toBe(true);
  expect(turns).toBeGreaterThan(3);
  expect(await walked.countDocuments(filter)).toBe(expected + 45);
});

test('a count SQLite tests row by row stops at the condition that decides a row (an $or or $nor at its first branch that holds, an AND at its first term that fails)', async () => {
  // SQLite computes an AND / OR used as a value from all its operands (its program's And / Or
  // opcodes), where a WHERE or a CASE jumps past the rest: a segment's groups and conditions each
  // walk the document's JSON, so every one of them cost every row.
  const marked = store.collection<Contact>('marked', schema, { countBy: 'accountId' }) as SqliteCollection<Contact>;
  await marked.insertMany(Array.from({ length: 2000 }, (_, i) => contact(i)));
  const filter = {
    accountId: 'acc',
    $or: [{ email: { $gte: 'reader5' } }, { n: { $lt: 10 }, at: { $gte: new Date(T0 + 5 * DAY) } }],
    $nor: [{ n: 3 }, { email: 'reader51@example.com' }],
  };
  const db = (store as SqliteStore).reader(marked.table)!;
  const planned = marked.table.countQuery(db, filter);
  expect(planned.native).toBe(false);
  expect(planned.chunked).toBeDefined(); // the walk in chunks, and the row by row read otherwise
  for (const sql of [planned.chunked!.sql, planned.sql]) {
    const opcodes = (db.prepare(`EXPLAIN ${sql}`).all() as { opcode: string }[]).map((r) => r.opcode);
    expect(opcodes).toContain('Function'); // the conditions on the document are in this program
    expect(opcodes).not.toContain('Or');
    expect(opcodes).not.toContain('And');
  }
  const expected = Array.from({ length: 2000 }, (_, i) => contact(i)).filter((x) => x.accountId === 'acc' && (x.email >= 'reader5' || (x.n < 10 && x.at.getTime() >= T0 + 5 * DAY)) && !(x.n === 3 || x.email === 'reader51@example.com'));
  expect(await marked.countDocuments(filter)).toBe(expected.length);
});

test('a count or scan whose SQL condition matches few rows is sliced too (SQLite never walks the account in one step)', async () => {
  // more rows than SQLite walks within one slice
  const many = store.collection<Contact>('many', schema);
  for (let i = 0; i < 250_000; i += 25_000) await many.insertMany(Array.from({ length: 25_000 }, (_, k) => ({ ...contact(i + k), _id: `m${i + k}`, accountId: 'acc' })));
  const counted = await during(() => many.countDocuments({ accountId: 'acc', email: 'reader123456@example.com' }));
  expect(counted.result).toBe(1);
  expect(counted.pointReadFirst).toBe(true);
  const scanned = await during(async () => {
    const ids: string[] = [];
    for await (const batch of acrossAccounts(many).scan({ $or: [{ email: 'reader12345@example.com' }, { email: 'reader234567@example.com' }] })) ids.push(...batch.map((d) => d._id));
    return ids.sort();
  });
  expect(scanned.result).toEqual(['m12345', 'm234567']);
  await acrossAccounts(many).deleteMany({});
  expect(scanned.pointReadFirst).toBe(true);
});

test('an unbounded find is sliced and returns every match in order', async () => {
  const c = store.collection<Contact>('contacts', schema);
  const { result, turns, pointReadFirst } = await during(() => c.find(jsFilter, { sort: { n: 1, _id: 1 }, projection: { n: 1 } }));
  const expected = [...expectedJs].sort((a, b) => a.n - b.n || (a._id < b._id ? -1 : 1)).map((x) => ({ _id: x._id, n: x.n }));
  expect(result).toEqual(expected);
  expect(pointReadFirst).toBe(true);
  expect(turns).toBeGreaterThan(3);
});

test('an aggregation streams its documents: $bucket and $group sums merged across batches, other stages at the end', async () => {
  const c = store.collection<Contact>('contacts', schema);
  const boundaries = Array.from({ length: 31 }, (_, d) => T0 + d * DAY - 0.5);
  const { result, turns, pointReadFirst } = await during(() =>
    c.aggregate([
      { $match: { accountId: 'acc', at: { $gte: new Date(T0), $lt: new Date(T0 + 30 * DAY) } } },
      { $project: { _id: 0, t: { $toLong: '$at' } } },
      { $bucket: { groupBy: '$t', boundaries, output: { count: { $sum: 1 } } } },
    ]),
  );
  const perDay = new Map<number, number>();
  for (const x of mine) perDay.set(Math.floor((+x.at - T0) / DAY), (perDay.get(Math.floor((+x.at - T0) / DAY)) ?? 0) + 1);
  // (mingo's $bucket also lists empty buckets, with a count of 0, where MongoDB leaves them out)
  expect((result as { count: number }[]).filter((r) => r.count > 0)).toEqual([...perDay.keys()].sort((a, b) => a - b).map((d) => ({ _id: boundaries[d], count: perDay.get(d) })));
  expect(pointReadFirst).toBe(true);
  expect(turns).toBeGreaterThan(3);

  // sums per group over many batches; a $group key seen in every batch is one row
  const byTag = await c.aggregate([{ $match: { accountId: 'acc' } }, { $unwind: '$tags' }, { $group: { _id: '$tags', n: { $sum: 1 }, total: { $sum: '$n' } } }]);
  const vip = mine.filter((x) => x.tags.includes('vip'));
  expect(byTag).toEqual([{ _id: 'vip', n: vip.length, total: vip.reduce((s, x) => s + x.n, 0) }]);
  const [counted] = await c.aggregate([{ $match: { accountId: 'acc', n: { $lt: 10 } } }, { $count: 'k' }]);
  expect(counted).toEqual({ k: mine.filter((x) => x.n < 10).length });
  // an accumulator that does not merge ($avg) and a $sort before the $group run once over everything
  const avg = await c.aggregate([{ $match: { accountId: 'acc' } }, { $group: { _id: null, avg: { $avg: '$n' }, max: { $max: '$n' } } }]);
  expect(avg).toEqual([{ _id: null, avg: mine.reduce((s, x) => s + x.n, 0) / mine.length, max: 96 }]);
  const top = await c.aggregate([{ $match: { accountId: 'acc' } }, { $sort: { n: -1, _id: 1 } }, { $limit: 2 }, { $project: { _id: 1 } }]);
  expect(top).toEqual([...mine].sort((a, b) => b.n - a.n || (a._id < b._id ? -1 : 1)).slice(0, 2).map((x) => ({ _id: x._id })));
});

test('scan: bounded batches, every match once in order, a write committed during it is seen by other reads', async () => {
  const c = store.collection<Contact>('contacts', schema);
  const seen: string[] = [];
  let batches = 0;
  let afterWrite: number | undefined;
  for await (const batch of c.scan({ accountId: 'acc', n: 5 }, { sort: { _id: 1 }, batchSize: 100, projection: { email: 1 } })) {
    batches++;
    expect(batch.length).toBeLessThanOrEqual(100);
    for (const d of batch) {
      expect(Object.keys(d).sort()).toEqual(['_id', 'email']);
      seen.push(d._id);
    }
    if (batches === 1) {
      // the reader is not held on the scan's snapshot
      await c.insertOne({ _id: 'zz-new', accountId: 'acc', email: 'new@example.com', n: 5, at: new Date(T0), tags: [] });
      afterWrite = await c.countDocuments({ accountId: 'acc', _id: 'zz-new' });
    }
  }
  expect(afterWrite).toBe(1);
  const expected = mine.filter((x) => x.n === 5).map((x) => x._id);
  expect(seen.slice(0, expected.length)).toEqual(expected);
  expect(batches).toBeGreaterThanOrEqual(Math.ceil(expected.length / 100));
  await c.deleteOne({ _id: 'zz-new' });
});

test('a scan whose batches fill fast still gives the event loop turns (a yield to the consumer is none)', async () => {
  const c = store.collection<Contact>('contacts', schema);
  const { result, turns, pointReadFirst } = await during(async () => {
    let n = 0;
    for await (const batch of c.scan({ accountId: 'acc' }, { batchSize: 50 })) n += batch.length;
    return n;
  });
  expect(result).toBe(mine.length);
  expect(pointReadFirst).toBe(true);
  expect(turns).toBeGreaterThan(3);
});

test('a scan left early gives its connection back: more scans than connections, each left after one batch', async () => {
  const c = store.collection<Contact>('contacts', schema);
  for (let i = 0; i < 10; i++) {
    for await (const batch of c.scan({ accountId: 'acc' }, { batchSize: 10 })) {
      expect(batch).toHaveLength(10);
      break;
    }
  }
  expect(await c.countDocuments(jsFilter)).toBe(expectedJs.length);
});

test('long reads queue for scan connections; closing the store stops a long read at its next slice (it fails, the close completes)', async () => {
  const own = fs.mkdtempSync(path.join(os.tmpdir(), 'store-streaming-close-'));
  try {
    const s = await openStore({ dataDir: own });
    const c = s.collection<Contact>('contacts', schema);
    for (let i = 0; i < 30_000; i += 5000) await c.insertMany(Array.from({ length: 5000 }, (_, k) => contact(i + k)));
    // more long reads at once than scan connections: the later ones wait for one, all finish
    const expected = Array.from({ length: 30_000 }, (_, i) => contact(i)).filter((x) => x.accountId === 'acc' && JS_PATTERN.test(x.email)).length;
    expect(await Promise.all(Array.from({ length: 9 }, () => c.countDocuments(jsFilter)))).toEqual(Array(9).fill(expected));
    const counting = c.countDocuments(jsFilter);
    await new Promise((r) => setImmediate(r));
    await s.close();
    await expect(counting).rejects.toThrow(/closed/);
  } finally {
    fs.rmSync(own, { recursive: true, force: true });
  }
});
