// Embedded-engine (SQLite) behaviours the contract cannot express: durability across reopen and a real
// kill -9, the fsync setting, the directory lock, deadlock detection, unique indexes over existing
// data, indexes serving filters and sorts (rows read, SQLite's plan), and the one-time import of a
// data directory written by the previous engine (snapshot.jsonl + journal.jsonl).
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { DatabaseSync } from 'node:sqlite';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encodeRecord, JournalOp } from '../src/codec';
import { DuplicateKeyError, mongoose, openStore, Store } from '../src';
import type { SqliteCollection } from '../src/sqlite/collection';
import type { SqliteStore } from '../src/sqlite/store';

const tempDirs: string[] = [];
const children: ChildProcess[] = [];
const openStores: Store[] = [];

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-sqlite-'));
  tempDirs.push(dir);
  return dir;
}

async function open(dataDir: string, extra: { fsync?: boolean; log?: (m: string, f: Record<string, unknown>) => void } = {}): Promise<Store> {
  const store = await openStore({ dataDir, ...extra });
  openStores.push(store);
  return store;
}

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const store of openStores) await store.close().catch(() => undefined);
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

interface Item {
  _id: string;
  accountId: string;
  email?: string;
  n?: number;
  at?: Date;
  lines?: { sku: string; _id?: unknown }[];
  blob?: Buffer;
}

function itemSchema() {
  const schema = new mongoose.Schema(
    { _id: String, accountId: { type: String, required: true }, email: String, n: Number, at: Date, lines: [{ sku: String }], blob: Buffer },
    { versionKey: false },
  );
  schema.index({ accountId: 1, email: 1 }, { unique: true, partialFilterExpression: { email: { $exists: true } } });
  return schema;
}

// one schema object: a store refuses to reopen a collection under a different schema
const ITEMS = itemSchema();
const snapshotOf = async (store: Store) => store.collection<Item>('items', ITEMS).find({}, { sort: { _id: 1 } });

describe('durability', () => {
  test('reopen: inserts, updates, deletes, transactions, Dates, Buffers and subdocument ObjectIds', async () => {
    const dir = tempDir();
    const store = await open(dir);
    const items = store.collection<Item>('items', ITEMS);
    await items.insertMany([
      { _id: 'a', accountId: 'acc', email: 'a@x', n: 1, at: new Date('2024-01-01T00:00:00Z'), lines: [{ sku: 'k' }], blob: Buffer.from('bytes') },
      { _id: 'b', accountId: 'acc', email: 'b@x', n: 2 },
      { _id: 'c', accountId: 'acc', n: 3 },
    ]);
    await items.updateOne({ _id: 'a' }, { $inc: { n: 10 } });
    await items.deleteOne({ _id: 'b' });
    await store.transaction(async (tx) => {
      await items.insertOne({ _id: 'd', accountId: 'acc2', email: 'b@x' }, { tx });
      await items.updateOne({ _id: 'c' }, { $set: { email: 'c@x' } }, { tx });
    });
    const before = await snapshotOf(store);
    expect(before[0].lines![0]).toHaveProperty('_id'); // mongoose's default subdocument ObjectId
    await store.close();
    expect(fs.existsSync(path.join(dir, 'store.sqlite'))).toBe(true);

    const reopened = await open(dir);
    const after = await snapshotOf(reopened);
    expect(after).toEqual(before);
    expect(after[0].at).toBeInstanceOf(Date);
    expect(Buffer.isBuffer(after[0].blob) && after[0].blob.toString()).toBe('bytes');
    expect(String(after[0].lines![0]._id)).toBe(String(before[0].lines![0]._id));
    await expect(reopened.collection<Item>('items', ITEMS).insertOne({ _id: 'e', accountId: 'acc', email: 'a@x' })).rejects.toBeInstanceOf(DuplicateKeyError);
    await reopened.close();
  });

  test('WAL; the fsync setting maps to synchronous=FULL, else NORMAL', async () => {
    const normal = (await open(tempDir())) as unknown as SqliteStore;
    expect(normal.pragma('journal_mode')).toBe('wal');
    expect(normal.pragma('synchronous')).toBe(1); // NORMAL
    const full = (await open(tempDir(), { fsync: true })) as unknown as SqliteStore;
    expect(full.pragma('synchronous')).toBe(2); // FULL
    const items = (full as unknown as Store).collection<Item>('items', ITEMS);
    await Promise.all(Array.from({ length: 100 }, (_, i) => items.insertOne({ _id: `f${i}`, accountId: 'acc', n: i })));
    expect(await items.countDocuments({ accountId: 'acc' })).toBe(100);
    await normal.close();
    await full.close();
  });

  test('concurrent writes are committed together; a failing one fails alone', async () => {
    const dir = tempDir();
    let store = await open(dir);
    const items = store.collection<Item>('items', ITEMS);
    await items.insertOne({ _id: 'taken', accountId: 'acc', email: 'taken@x' });
    const results = await Promise.allSettled(Array.from({ length: 2000 }, (_, i) => items.insertOne({ _id: `g${i}`, accountId: `acc${i % 7}`, n: i, ...(i === 1000 ? { accountId: 'acc', email: 'taken@x' } : {}) })));
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason)).toEqual([expect.any(DuplicateKeyError)]);
    await store.close();
    store = await open(dir);
    expect(await store.collection<Item>('items', ITEMS).countDocuments({})).toBe(2000);
    await store.close();
  });
});

describe('kill -9', () => {
  const pkgDir = path.resolve(__dirname, '..');
  const distIndex = path.join(pkgDir, 'dist', 'index.js');

  beforeAll(() => {
    // the child runs the compiled package, exactly what services run (incremental: fast when up to date)
    execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b', pkgDir], { stdio: 'inherit' });
  }, 120_000);

  test('every write acknowledged before SIGKILL survives; transactions are all-or-nothing', async () => {
    const dir = tempDir();
    const scriptDir = tempDir();
    const script = path.join(scriptDir, 'writer.js');
    fs.writeFileSync(
      script,
      `
const { openStore, mongoose } = require(${JSON.stringify(distIndex)});
(async () => {
  const store = await openStore({ dataDir: process.argv[2] });
  const schema = new mongoose.Schema({ _id: String, accountId: String, n: Number, pair: String }, { versionKey: false });
  const items = store.collection('items', schema);
  for (let round = 0; ; round++) {
    const pending = [];
    for (let k = 0; k < 50; k++) {
      const id = 'i-' + round + '-' + k;
      pending.push(items.insertOne({ _id: id, accountId: 'acc', n: k }).then(() => process.stdout.write('ack ' + id + '\\n')));
    }
    const p = 'p-' + round;
    pending.push(store.transaction(async (tx) => {
      await items.insertOne({ _id: p + '-a', accountId: 'acc', pair: p }, { tx });
      await items.updateOne({ _id: 'i-' + round + '-0' }, { $set: { pair: p } }, { tx });
      await items.insertOne({ _id: p + '-b', accountId: 'acc', pair: p }, { tx });
    }).then(() => process.stdout.write('ack ' + p + '-a\\nack ' + p + '-b\\n')));
    await Promise.all(pending);
  }
})().catch((err) => { console.error(err); process.exit(1); });
`,
    );

    const child = spawn(process.execPath, [script, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    const acked: string[] = [];
    let buffered = '';
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop()!; // an incomplete line was not fully acknowledged yet
      for (const line of lines) if (line.startsWith('ack ')) acked.push(line.slice(4));
      if (acked.length >= 5000 && child.exitCode === null && !child.killed) child.kill('SIGKILL');
    });
    const signal = await exited; // 'close': stdout fully read, so every ack the child wrote is in `acked`
    expect(signal).toBe('SIGKILL');
    expect(acked.length).toBeGreaterThanOrEqual(5000);

    const store = await open(dir); // the dead child's lock is stale and taken over
    const items = store.collection<{ _id: string; pair?: string }>('items', new mongoose.Schema({ _id: String, accountId: String, n: Number, pair: String }));
    const present = new Set((await items.find({})).map((d) => d._id));
    const missing = acked.filter((id) => !present.has(id));
    expect(missing).toEqual([]);
    // transactions: both inserts and the update, or none of them
    for (const doc of await items.find({ _id: { $regex: '^p-' } })) {
      const round = doc.pair!.slice(2);
      expect(present.has(`p-${round}-a`) && present.has(`p-${round}-b`)).toBe(true);
      expect((await items.findOne({ _id: `i-${round}-0` }))!.pair).toBe(doc.pair);
    }
    console.log(`kill -9: ${acked.length} acknowledged writes, all ${present.size >= acked.length ? 'present' : 'MISSING'} (${present.size} documents on disk)`);
    await store.close();
  }, 120_000);
});

describe('engine rules', () => {
  test('one process per data dir; the lock is released on close', async () => {
    const dir = tempDir();
    const store = await open(dir);
    await expect(openStore({ dataDir: dir })).rejects.toThrow(/in use/);
    await store.close();
    const again = await open(dir);
    await again.close();
    // a lock naming this very pid but held by no store here was left by a predecessor with the same pid (container restart)
    fs.writeFileSync(path.join(dir, 'LOCK'), String(process.pid));
    const restarted = await open(dir);
    await restarted.close();
  });

  test('a write without { tx } inside a transaction is rejected instead of deadlocking', async () => {
    const store = await open(tempDir());
    const items = store.collection<Item>('items', ITEMS);
    await expect(
      store.transaction(async (tx) => {
        await items.insertOne({ _id: 'a', accountId: 'acc' }, { tx });
        await items.insertOne({ _id: 'b', accountId: 'acc' });
      }),
    ).rejects.toThrow(/pass \{ tx \}/);
    await expect(store.transaction(async () => store.transaction(async () => 1))).rejects.toThrow(/pass \{ tx \}/);
    expect(await items.countDocuments({})).toBe(0);
    await items.insertOne({ _id: 'c', accountId: 'acc' }); // and the store is still usable
    await expect(store.transaction(async () => 'ok')).resolves.toBe('ok');
    await store.close();
    await expect(items.find({})).rejects.toThrow(/closed/);
    expect(await store.ping()).toBe(false);
  });

  test('a collection first opened inside a transaction: its table comes with its first write, and goes if that rolls back', async () => {
    const store = await open(tempDir());
    const schema = new mongoose.Schema({ _id: String, accountId: String, n: Number }, { versionKey: false });
    schema.index({ accountId: 1, n: 1 }, { unique: true });
    let late!: ReturnType<typeof store.collection<{ _id: string; accountId: string; n: number }>>;
    await expect(
      store.transaction(async (tx) => {
        late = store.collection('late', schema);
        expect(await late.countDocuments({})).toBe(0); // no table yet: nothing to read
        await late.insertOne({ _id: 'a', accountId: 'acc', n: 1 }, { tx });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await late.find({})).toEqual([]);
    await late.insertOne({ _id: 'b', accountId: 'acc', n: 1 }); // the table (and its unique index) made again
    await expect(late.insertOne({ _id: 'c', accountId: 'acc', n: 1 })).rejects.toBeInstanceOf(DuplicateKeyError);
    expect((await late.find({})).map((d) => d._id)).toEqual(['b']);
    await store.close();
  });

  test('declaring a unique index that existing data violates fails like syncIndexes would', async () => {
    const dir = tempDir();
    let store = await open(dir);
    const loose = new mongoose.Schema({ _id: String, accountId: String, email: String });
    await store.collection<{ _id: string; accountId: string; email: string }>('people', loose).insertMany([{ _id: '1', accountId: 'a', email: 'x' }, { _id: '2', accountId: 'a', email: 'x' }]);
    await store.close();
    store = await open(dir);
    const strict = new mongoose.Schema({ _id: String, accountId: String, email: { type: String, unique: true } });
    expect(() => store.collection('people', strict)).toThrow(DuplicateKeyError);
    await store.close();
  });

});

describe('indexes from the schema serve filters and sorts', () => {
  interface Sub {
    _id: string;
    accountId: string;
    email: string;
    status: string;
    registeredAt: Date;
    dedupeKey?: string | null;
  }
  const schema = new mongoose.Schema(
    { _id: String, accountId: String, email: String, status: String, registeredAt: Date, dedupeKey: String },
    { versionKey: false },
  );
  schema.index({ accountId: 1, email: 1 }, { unique: true });
  schema.index({ accountId: 1, status: 1, registeredAt: 1 });
  schema.index({ accountId: 1, registeredAt: 1, _id: 1 });
  schema.index({ accountId: 1, dedupeKey: 1 }, { unique: true, partialFilterExpression: { dedupeKey: { $gt: '' } }, name: 'dedupe' });
  const N = 100_000;
  let store: Store;
  let subs: SqliteCollection<Sub>;

  beforeAll(async () => {
    store = await open(tempDir());
    subs = store.collection<Sub>('subs', schema) as SqliteCollection<Sub>;
    const docs = Array.from({ length: N }, (_, i) => ({
      _id: `s-${String(i).padStart(6, '0')}`,
      accountId: i % 10 === 0 ? 'other' : 'acc',
      email: `user${i}@example.com`,
      status: i % 3 === 0 ? 'unsubscribed' : 'active',
      registeredAt: new Date(1_700_000_000_000 + ((i * 7919) % N) * 1000),
      dedupeKey: i % 2 ? `k${i}` : null,
    }));
    for (let i = 0; i < docs.length; i += 10_000) await subs.insertMany(docs.slice(i, i + 10_000));
  }, 120_000);

  const read = async <R>(fn: () => Promise<R>): Promise<{ result: R; rows: number }> => {
    const before = subs.table.rowsRead;
    const result = await fn();
    return { result, rows: subs.table.rowsRead - before };
  };

  test('a page of an index prefix, sorted on the index, reads only its own rows and sorts nothing', async () => {
    const filter = { accountId: 'acc', status: 'active' };
    const options = { sort: { registeredAt: -1 as const }, skip: 100, limit: 50 };
    const { result: page, rows } = await read(() => subs.find(filter, options));
    expect(rows).toBe(50);
    expect(page).toHaveLength(50);
    // the right rows: the same as sorting every match in JavaScript
    const all = (await subs.find(filter)).sort((a, b) => b.registeredAt.getTime() - a.registeredAt.getTime());
    expect(all).toHaveLength(60_000);
    expect(page.map((d) => d._id)).toEqual(all.slice(100, 150).map((d) => d._id));
    const plan = subs.explain(filter, options).plan.join('\n');
    expect(plan).toMatch(/USING INDEX subs\.accountId_1_status_1_registeredAt_1/);
    expect(plan).not.toMatch(/TEMP B-TREE/);
  });

  test('counts of an index prefix are answered by the index alone', async () => {
    const { result, rows } = await read(() => subs.countDocuments({ accountId: 'acc', status: 'unsubscribed' }));
    expect(result).toBe(30_000);
    expect(rows).toBe(0);
    expect(subs.explain({ accountId: 'acc', status: 'unsubscribed' }).plan.join('\n')).toMatch(/USING (COVERING )?INDEX subs\.accountId_1_status_1_registeredAt_1/);
  });

  test('a sort by (registeredAt, _id) within an account walks its index', async () => {
    const options = { sort: { registeredAt: 1 as const, _id: 1 as const }, limit: 20 };
    const { result, rows } = await read(() => subs.find({ accountId: 'other' }, options));
    expect(rows).toBe(20);
    expect(result.map((d) => d.registeredAt.getTime())).toEqual([...result.map((d) => d.registeredAt.getTime())].sort((a, b) => a - b));
    const plan = subs.explain({ accountId: 'other' }, options).plan.join('\n');
    expect(plan).toMatch(/USING INDEX subs\.accountId_1_registeredAt_1__id_1/);
    expect(plan).not.toMatch(/TEMP B-TREE/);
  });

  test('a range on the index field after the fixed prefix bounds a sliced read: rows outside it are not stepped through', async () => {
    // other conditions (here the status) keep the read sliced; the range is where SQLite walks
    const until = new Date(1_700_000_000_000 + 2_000 * 1000);
    const filter = { accountId: 'other', registeredAt: { $lte: until }, status: { $ne: 'unsubscribed' } };
    const options = { sort: { registeredAt: 1 as const }, limit: 1_000 };
    const { result, rows } = await read(() => subs.find(filter, options));
    const all = (await subs.find({ accountId: 'other' })).filter((d) => d.registeredAt <= until && d.status !== 'unsubscribed');
    expect(result.map((d) => d._id)).toEqual(all.sort((a, b) => a.registeredAt.getTime() - b.registeredAt.getTime()).map((d) => d._id));
    expect(result.length).toBeGreaterThan(0);
    // the account's 10,000 rows before: only the ~200 up to `until` now
    expect(rows).toBeLessThanOrEqual(250);
    expect((await read(() => subs.countDocuments(filter))).rows).toBeLessThanOrEqual(250);
  });

  test('point lookups by a unique key, and by a partial unique key whose value passes its filter', async () => {
    const { result, rows } = await read(() => subs.findOne({ accountId: 'acc', email: 'user77@example.com' }));
    expect(result!._id).toBe('s-000077');
    expect(rows).toBe(1);
    expect(subs.explain({ accountId: 'acc', email: 'x' }).plan.join('\n')).toMatch(/USING INDEX subs\.accountId_1_email_1/);
    const byKey = await read(() => subs.findOne({ accountId: 'acc', dedupeKey: 'k77' }));
    expect(byKey.result!._id).toBe('s-000077');
    expect(byKey.rows).toBe(1);
    expect(subs.explain({ accountId: 'acc', dedupeKey: 'k77' }).plan.join('\n')).toMatch(/USING INDEX subs\.dedupe/);
    // null is not in the partial index: that lookup must not use it, and still finds the documents
    expect(subs.explain({ accountId: 'acc', dedupeKey: null }).plan.join('\n')).not.toMatch(/subs\.dedupe/);
    expect(await subs.countDocuments({ accountId: 'acc', dedupeKey: null })).toBe(40_000);
  });

  test('a list of ids in an account reads those documents by _id, not the whole account', async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `s-${String(i * 3 + 1).padStart(6, '0')}`);
    const result = await subs.find({ accountId: 'acc', _id: { $in: ids } });
    expect(result.map((d) => d._id).sort()).toEqual(ids.filter((id) => Number(id.slice(2)) % 10 !== 0).sort());
    // (SQLite's own planner took an index on accountId here and walked the account's 90,000 entries)
    expect(subs.explain({ accountId: 'acc', _id: { $in: ids } }).plan.join('\n')).toMatch(/USING INDEX sqlite_autoindex_subs_1/);
    expect(await subs.countDocuments({ accountId: 'acc', _id: { $in: ids } })).toBe(result.length);
  });

  test('a list of addresses in an account ($in on an index field) reads the matches, not the account', async () => {
    const numbers = Array.from({ length: 30 }, (_, i) => i + 1);
    const emails = [...numbers.map((i) => `user${i}@example.com`), 'nobody@example.com'];
    const inAccount = numbers.filter((i) => i % 10 !== 0); // every tenth is another account's
    const { result, rows } = await read(() => subs.find({ accountId: 'acc', email: { $in: emails } }));
    expect(result.map((d) => d.email).sort()).toEqual(inAccount.map((i) => `user${i}@example.com`).sort());
    expect(rows).toBe(inAccount.length);
    // both index columns searched: one probe per address (not a walk of the account's index entries)
    expect(subs.explain({ accountId: 'acc', email: { $in: emails } }).plan.join('\n')).toMatch(/USING INDEX subs\.accountId_1_email_1 \(\S*accountId=\? AND \S*email=\?\)/);
    // another condition besides: only the listed addresses' rows are tested against it
    const unsubscribed = await read(() => subs.find({ accountId: 'acc', email: { $in: emails }, status: 'unsubscribed' }));
    expect(unsubscribed.result.map((d) => d.email).sort()).toEqual(inAccount.filter((i) => i % 3 === 0).map((i) => `user${i}@example.com`).sort());
    expect(unsubscribed.rows).toBe(inAccount.length);
  });

  test('a filter SQL cannot decide (a regex) is checked row by row in index order, stopping at the page', async () => {
    const { result, rows } = await read(() => subs.find({ accountId: 'acc', email: { $regex: '5@' } }, { sort: { registeredAt: 1, _id: 1 }, limit: 10 }));
    expect(result).toHaveLength(10);
    expect(result.every((d) => /5@/.test(d.email))).toBe(true);
    expect(rows).toBeLessThan(500); // ~1 in 10 matches: about 100 rows read, not the account's 90,000
  });
});

describe("the planner's statistics follow the collection's growth", () => {
  // A list page: newest first within an account, ties broken by _id, on an index that serves the
  // account and the date but not the tie-break. With statistics taken while the collection held 50
  // documents SQLite judged scanning and sorting the whole table cheaper than walking the index
  // (bench/email-records: 250 ms a page at 40,000 records, growing with the account).
  interface Msg {
    _id: string;
    accountId: string;
    status: string;
    createdAt: Date;
  }
  const schema = new mongoose.Schema({ _id: String, accountId: String, status: String, createdAt: Date }, { versionKey: false });
  schema.index({ accountId: 1, createdAt: -1 });
  schema.index({ accountId: 1, status: 1 });
  const page = { sort: { createdAt: -1 as const, _id: -1 as const }, skip: 450, limit: 50 };
  const msgs = (from: number, n: number): Msg[] =>
    Array.from({ length: n }, (_, k) => ({ _id: `m${String(from + k).padStart(6, '0')}`, accountId: 'acc', status: (from + k) % 7 ? 'DELIVERED' : 'BOUNCED', createdAt: new Date(1_700_000_000_000 + ((from + k) % 450) * 1000) }));
  const statistics = (dir: string) => {
    const db = new DatabaseSync(path.join(dir, 'store.sqlite'), { readOnly: true });
    try {
      return (db.prepare(`SELECT stat FROM sqlite_stat1 WHERE idx = 'msgs.accountId_1_createdAt_-1'`).get() as { stat: string } | undefined)?.stat;
    } finally {
      db.close();
    }
  };

  /** A store whose statistics were taken at 50 documents (a service stopped while small), then grown to 20,050 without them. */
  async function grownPastItsStatistics(): Promise<string> {
    const dir = tempDir();
    const small = await openStore({ dataDir: dir });
    const c = small.collection<Msg>('msgs', schema);
    await c.insertMany(msgs(0, 50));
    await c.updateOne({ accountId: 'acc', _id: 'm000001' }, { $set: { status: 'BOUNCED' } }); // the writer queried it: analyzed at close
    await small.close();
    expect(statistics(dir)).toMatch(/^50 /);
    const grown = await openStore({ dataDir: dir });
    const g = grown.collection<Msg>('msgs', schema);
    for (let i = 50; i < 20_050; i += 5_000) await g.insertMany(msgs(i, 5_000));
    await grown.close();
    expect(statistics(dir)).toMatch(/^50 /); // inserts alone: the close left them as they were
    return dir;
  }

  const expectIndexWalk = (c: SqliteCollection<Msg>) => {
    const plan = c.explain({ accountId: 'acc' }, page).plan.join('\n');
    expect(plan).toMatch(/SEARCH msgs USING INDEX msgs\.accountId_1_createdAt_-1/);
    expect(plan).not.toMatch(/SCAN msgs|USE TEMP B-TREE FOR ORDER BY/);
  };

  test('opening the store refreshes statistics the collection has outgrown', async () => {
    const dir = await grownPastItsStatistics();
    const store = await open(dir);
    expect(statistics(dir)).toMatch(/^20050 /);
    const c = store.collection<Msg>('msgs', schema) as SqliteCollection<Msg>;
    expectIndexWalk(c);
    const found = await c.find({ accountId: 'acc' }, page);
    expect(found.map((d) => d._id)).toEqual((await c.find({ accountId: 'acc' })).sort((a, b) => +b.createdAt - +a.createdAt || (a._id < b._id ? 1 : -1)).slice(450, 500).map((d) => d._id));
  }, 60_000);

  test('a long-running store refreshes them hourly, and its reads plan with the new ones', async () => {
    const dir = tempDir();
    const store = (await open(dir)) as SqliteStore;
    const c = store.collection<Msg>('msgs', schema) as SqliteCollection<Msg>;
    await c.insertMany(msgs(0, 50));
    await c.updateOne({ accountId: 'acc', _id: 'm000001' }, { $set: { status: 'BOUNCED' } });
    store.refreshStatistics();
    expect(statistics(dir)).toMatch(/^50 /);
    c.explain({ accountId: 'acc' }, page); // the reader plans with them from now on
    for (let i = 50; i < 20_050; i += 5_000) await c.insertMany(msgs(i, 5_000));
    store.refreshStatistics();
    expect(statistics(dir)).toMatch(/^20050 /);
    // the reader's next read notices the change and reloads (EXPLAIN alone reads nothing)
    expect(await c.findOne({ accountId: 'acc', _id: 'm000001' })).not.toBeNull();
    expectIndexWalk(c);
  }, 60_000);
});

describe('multikey indexes (arrays) are side tables the triggers keep in step', () => {
  interface Doc {
    _id: string;
    accountId: string;
    tags?: string[];
    orders?: { sku: string; at: Date }[];
    optOuts?: { topicId: string }[];
  }
  const schema = new mongoose.Schema(
    {
      _id: String,
      accountId: String,
      tags: { type: [String], default: undefined },
      orders: { type: [{ _id: false, sku: String, at: Date }], default: undefined },
      optOuts: { type: [{ _id: false, topicId: String }], default: undefined },
    },
    { versionKey: false },
  );
  schema.index({ accountId: 1, tags: 1 });
  schema.index({ accountId: 1, 'orders.sku': 1, 'orders.at': 1 });
  schema.index({ accountId: 1, 'optOuts.topicId': 1 });

  test('lookups read only the rows holding the element; writes, deletes and rebuilds keep the table right', async () => {
    const dir = tempDir();
    let store = await open(dir);
    let docs = store.collection<Doc>('docs', schema) as SqliteCollection<Doc>;
    const N = 20_000;
    await docs.insertMany(
      Array.from({ length: N }, (_, i) => ({
        _id: `d${i}`,
        accountId: i % 2 ? 'a' : 'b',
        tags: i % 100 === 1 ? ['rare', `t${i % 7}`] : [`t${i % 7}`],
        orders: i % 3 ? [{ sku: `s${i % 50}`, at: new Date(i * 1000) }] : undefined,
        optOuts: i % 500 === 1 ? [{ topicId: 'news' }] : undefined,
      })),
    );
    const rowsOf = async (filter: Record<string, unknown>) => {
      const before = docs.table.rowsRead;
      const found = await docs.find(filter);
      return { ids: found.map((d) => d._id).sort(), rows: docs.table.rowsRead - before };
    };
    const rare = await rowsOf({ accountId: 'a', tags: 'rare' });
    expect(rare.ids).toHaveLength(N / 100);
    expect(rare.rows).toBe(N / 100);
    expect(docs.explain({ accountId: 'a', tags: 'rare' }).plan.join('\n')).toMatch(/docs\.accountId_1_tags_1\.keys/);
    const bySku = await rowsOf({ accountId: 'a', 'orders.sku': { $in: ['s7', 's9'] } });
    expect(bySku.rows).toBe(bySku.ids.length);
    expect(bySku.ids).toHaveLength(Array.from({ length: N }, (_, i) => i).filter((i) => i % 2 && i % 3 && [7, 9].includes(i % 50)).length);
    expect((await rowsOf({ accountId: 'a', orders: { $elemMatch: { sku: 's7' } } })).rows).toBe(bySku.ids.filter((id) => Number(id.slice(1)) % 50 === 7).length);
    // an $or of element conditions (a topic removed: members and opt-outs), each branch through its side table
    const either = await rowsOf({ accountId: 'a', $or: [{ tags: 'rare' }, { 'optOuts.topicId': 'news' }] });
    expect(either.ids).toEqual([...new Set([...rare.ids, ...Array.from({ length: N }, (_, i) => i).filter((i) => i % 500 === 1).map((i) => `d${i}`)])].sort());
    expect(either.rows).toBe(either.ids.length);

    // updates and deletes move the entries
    expect((await docs.updateMany({ accountId: 'a', tags: 'rare' }, { $pull: { tags: 'rare' } })).modifiedCount).toBe(N / 100);
    await docs.updateOne({ _id: 'd2' }, { $push: { tags: 'rare' } });
    await docs.deleteMany({ accountId: 'b', tags: 't0' });
    expect((await rowsOf({ accountId: 'a', tags: 'rare' })).ids).toEqual([]);
    expect((await rowsOf({ accountId: 'b', tags: 'rare' })).ids).toEqual(['d2']);
    expect(await docs.countDocuments({ accountId: 'b', tags: 't0' })).toBe(0);
    await store.close();

    // a side table built from stored documents (an index added to a schema, an imported directory) gives the same answers
    const renamed = schema.clone();
    renamed.index({ accountId: 1, tags: 1 }, { name: 'by_tag' });
    store = await open(dir);
    docs = store.collection<Doc>('docs', renamed) as SqliteCollection<Doc>;
    expect((await rowsOf({ accountId: 'b', tags: 'rare' })).ids).toEqual(['d2']);
    const t3 = await rowsOf({ accountId: 'b', tags: 't3' });
    expect(t3.rows).toBe(t3.ids.length);
    expect(t3.ids).toEqual(Array.from({ length: N }, (_, i) => i).filter((i) => i % 2 === 0 && i % 7 === 3 && !(i % 7 === 0)).map((i) => `d${i}`).sort());
    await store.close();
  }, 120_000);
});

describe('import of a data directory written by the previous engine', () => {
  const line = (ops: JournalOp[]) => encodeRecord(ops);
  const people = new mongoose.Schema({ _id: String, accountId: String, email: String, joinedAt: Date }, { versionKey: false });
  people.index({ accountId: 1, email: 1 }, { unique: true });
  const notes = new mongoose.Schema({ _id: String, accountId: String, text: String }, { versionKey: false });

  function legacyDir(): string {
    const dir = tempDir();
    const snapshot = [
      line([
        ['people', 'p1', { _id: 'p1', accountId: 'a', email: 'one@x', joinedAt: new Date('2024-01-01T00:00:00Z') }],
        ['people', 'p2', { _id: 'p2', accountId: 'a', email: 'two@x', joinedAt: new Date('2024-01-02T00:00:00Z') }],
      ]),
      line([['notes', 'n1', { _id: 'n1', accountId: 'a', text: 'hello' }]]),
    ];
    const journal = [
      line([['people', 'p3', { _id: 'p3', accountId: 'b', email: 'three@x', joinedAt: new Date('2024-01-03T00:00:00Z') }]]),
      line([['people', 'p2', { _id: 'p2', accountId: 'a', email: 'two@x', joinedAt: new Date('2025-05-05T00:00:00Z') }], ['notes', 'n1', null]]),
      line([['notes', 'n2', { _id: 'n2', accountId: 'b', text: 'kept' }]]),
    ];
    fs.writeFileSync(path.join(dir, 'snapshot.jsonl'), snapshot.join(''));
    // the last record torn by a crash mid-write: never acknowledged, so not imported
    fs.writeFileSync(path.join(dir, 'journal.jsonl'), journal.join('') + '[["notes","torn",{"_id":"to');
    fs.writeFileSync(path.join(dir, 'LOCK'), '999999999'); // left by the dead process of the old build
    return dir;
  }

  test('imported at the first start, once, with one log line per collection; the old files are kept aside', async () => {
    const dir = legacyDir();
    const logged: Record<string, unknown>[] = [];
    const store = await open(dir, { log: (message, fields) => logged.push({ message, ...fields }) });
    expect(logged.map((l) => [l.collection, l.documents])).toEqual([
      ['people', 3],
      ['notes', 1],
    ]);
    const p = store.collection<{ _id: string; accountId: string; email: string; joinedAt: Date }>('people', people);
    expect(await p.find({}, { sort: { _id: 1 } })).toEqual([
      { _id: 'p1', accountId: 'a', email: 'one@x', joinedAt: new Date('2024-01-01T00:00:00Z') },
      { _id: 'p2', accountId: 'a', email: 'two@x', joinedAt: new Date('2025-05-05T00:00:00Z') },
      { _id: 'p3', accountId: 'b', email: 'three@x', joinedAt: new Date('2024-01-03T00:00:00Z') },
    ]);
    expect(await p.countDocuments({ joinedAt: { $gte: new Date('2025-01-01T00:00:00Z') } })).toBe(1);
    await expect(p.insertOne({ _id: 'p4', accountId: 'a', email: 'one@x', joinedAt: new Date() })).rejects.toBeInstanceOf(DuplicateKeyError);
    expect((await store.collection<{ _id: string }>('notes', notes).find({})).map((d) => d._id)).toEqual(['n2']);
    expect(fs.existsSync(path.join(dir, 'journal.jsonl'))).toBe(false);
    expect(fs.existsSync(path.join(dir, 'snapshot.jsonl.imported'))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'journal.jsonl.imported'))).toBe(true);
    await store.close();

    // files put back by hand (or a copy restored) are not imported a second time
    fs.copyFileSync(path.join(dir, 'journal.jsonl.imported'), path.join(dir, 'journal.jsonl'));
    logged.length = 0;
    const again = await open(dir, { log: (message, fields) => logged.push({ message, ...fields }) });
    expect(logged).toEqual([]);
    expect(await again.collection('people', people).countDocuments({})).toBe(3);
    await again.close();
  });

  test('old files put beside a store that already created the tables: the imported rows get their key columns and are counted', async () => {
    // a service started on SQLite (its tables, key columns and kept counts created), then stopped and
    // given an old engine's files (what bench/segments does to load a million contacts)
    const dir = tempDir();
    const first = await open(dir);
    await first.collection('people', people, { countBy: 'accountId' }).insertOne({ _id: 'p0', accountId: 'b', email: 'zero@x', joinedAt: new Date('2023-12-31T00:00:00Z') });
    await first.close();
    for (const f of ['snapshot.jsonl', 'journal.jsonl', 'LOCK']) fs.copyFileSync(path.join(legacyDir(), f), path.join(dir, f));
    const store = await open(dir, { log: () => undefined });
    const p = store.collection<{ _id: string; accountId: string; email: string; joinedAt: Date }>('people', people, { countBy: 'accountId' });
    expect(await p.countDocuments({ accountId: 'a' })).toBe(2); // the kept count
    expect(await p.countDocuments({ accountId: 'b' })).toBe(2);
    expect((await p.find({ accountId: 'a', email: 'two@x' })).map((d) => d.joinedAt)).toEqual([new Date('2025-05-05T00:00:00Z')]); // by the index
    await expect(p.insertOne({ _id: 'p4', accountId: 'b', email: 'three@x', joinedAt: new Date() })).rejects.toBeInstanceOf(DuplicateKeyError);
    await store.close();
  });

  test('an unreadable record followed by more records is corruption: the start fails and imports nothing', async () => {
    const dir = legacyDir();
    const journalPath = path.join(dir, 'journal.jsonl');
    fs.writeFileSync(journalPath, 'not json\n' + fs.readFileSync(journalPath, 'utf8'));
    await expect(openStore({ dataDir: dir, log: () => undefined })).rejects.toThrow(/corrupt/);
    expect(fs.existsSync(path.join(dir, 'LOCK'))).toBe(false); // a failed open releases the lock
    expect(fs.existsSync(journalPath)).toBe(true);
  });
});
