// Embedded-engine behaviours the contract cannot express: durability (journal replay, compaction,
// torn writes, a real kill -9), the directory lock, deadlock detection, and query speed.
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuplicateKeyError, mongoose, openStore, Store } from '../src';

const JOURNAL = 'journal.jsonl';
const SNAPSHOT = 'snapshot.jsonl';

const tempDirs: string[] = [];
const children: ChildProcess[] = [];
const openStores: Store[] = [];

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-embedded-'));
  tempDirs.push(dir);
  return dir;
}

async function open(dataDir: string, extra: { fsync?: boolean; compactThresholdBytes?: number } = {}): Promise<Store> {
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
  test('replay after reopen: inserts, updates, deletes, transactions, Dates, Buffers and subdocument ObjectIds', async () => {
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

    const reopened = await open(dir);
    const after = await snapshotOf(reopened);
    expect(after).toEqual(before);
    expect(after[0].at).toBeInstanceOf(Date);
    expect(Buffer.isBuffer(after[0].blob) && after[0].blob.toString()).toBe('bytes');
    expect(String(after[0].lines![0]._id)).toBe(String(before[0].lines![0]._id));
    // unique indexes are rebuilt from the replayed data
    await expect(reopened.collection<Item>('items', ITEMS).insertOne({ _id: 'e', accountId: 'acc', email: 'a@x' })).rejects.toBeInstanceOf(DuplicateKeyError);
    await reopened.close();
  });

  test('compaction: snapshot written, journal emptied, state intact; later writes replay on top', async () => {
    const dir = tempDir();
    let store = await open(dir);
    let items = store.collection<Item>('items', ITEMS);
    for (let i = 0; i < 50; i++) await items.insertOne({ _id: `i${i}`, accountId: 'acc', n: i });
    await items.deleteMany({ n: { $lt: 10 } });
    const expected = await snapshotOf(store);
    await store.close();
    const journalBefore = fs.statSync(path.join(dir, JOURNAL)).size;
    expect(journalBefore).toBeGreaterThan(0);

    store = await open(dir, { compactThresholdBytes: 1 });
    expect(fs.statSync(path.join(dir, JOURNAL)).size).toBe(0);
    expect(fs.statSync(path.join(dir, SNAPSHOT)).size).toBeGreaterThan(0);
    expect(fs.existsSync(path.join(dir, SNAPSHOT + '.tmp'))).toBe(false);
    expect(await snapshotOf(store)).toEqual(expected);
    items = store.collection<Item>('items', ITEMS);
    await items.updateOne({ _id: 'i20' }, { $set: { n: -1 } });
    const expected2 = await snapshotOf(store);
    await store.close();

    store = await open(dir); // default threshold: no compaction, snapshot + journal replay
    expect(fs.statSync(path.join(dir, JOURNAL)).size).toBeGreaterThan(0);
    expect(await snapshotOf(store)).toEqual(expected2);
    await store.close();
  });

  test('a crash during compaction loses nothing: stale temp file ignored, journal replayed twice is harmless', async () => {
    const dir = tempDir();
    let store = await open(dir);
    const items = store.collection<Item>('items', ITEMS);
    await items.insertMany([{ _id: 'a', accountId: 'acc', n: 1 }, { _id: 'b', accountId: 'acc', n: 2 }]);
    await items.deleteOne({ _id: 'a' });
    await items.updateOne({ _id: 'b' }, { $set: { n: 3 } });
    const expected = await snapshotOf(store);
    await store.close();
    const journal = fs.readFileSync(path.join(dir, JOURNAL));

    store = await open(dir, { compactThresholdBytes: 1 });
    await store.close();
    // crash after the snapshot rename but before the journal was emptied: the old journal is still there
    fs.writeFileSync(path.join(dir, JOURNAL), journal);
    // crash while writing a new snapshot: a half-written temp file
    fs.writeFileSync(path.join(dir, SNAPSHOT + '.tmp'), '[["items","zz",{"_id":"z');
    store = await open(dir);
    expect(await snapshotOf(store)).toEqual(expected);
    expect(fs.existsSync(path.join(dir, SNAPSHOT + '.tmp'))).toBe(false);
    await store.close();
  });

  test('a torn last journal line is ignored and cut off, never fatal', async () => {
    const dir = tempDir();
    let store = await open(dir);
    let items = store.collection<Item>('items', ITEMS);
    await items.insertMany([{ _id: 'a', accountId: 'acc' }, { _id: 'b', accountId: 'acc' }]);
    await store.close();
    const journalPath = path.join(dir, JOURNAL);
    const goodSize = fs.statSync(journalPath).size;
    fs.appendFileSync(journalPath, '[["items","torn",{"_id":"torn","accountId":"ac');

    store = await open(dir);
    items = store.collection<Item>('items', ITEMS);
    expect((await items.find({})).map((d) => d._id).sort()).toEqual(['a', 'b']);
    expect(fs.statSync(journalPath).size).toBe(goodSize); // cut, so new records never follow garbage
    await items.insertOne({ _id: 'c', accountId: 'acc' });
    await store.close();

    // a garbled but newline-terminated last line (power loss) is tolerated the same way
    fs.appendFileSync(journalPath, '\u0000\u0000garbage\n');
    store = await open(dir);
    expect((await store.collection<Item>('items', ITEMS).find({})).map((d) => d._id).sort()).toEqual(['a', 'b', 'c']);
    await store.close();
  });

  test('an unreadable record followed by more records is corruption: start-up refuses', async () => {
    const dir = tempDir();
    const store = await open(dir);
    await store.collection<Item>('items', ITEMS).insertOne({ _id: 'a', accountId: 'acc' });
    await store.close();
    const journalPath = path.join(dir, JOURNAL);
    const good = fs.readFileSync(journalPath, 'utf8');
    fs.writeFileSync(journalPath, 'not json\n' + good);
    await expect(openStore({ dataDir: dir })).rejects.toThrow(/corrupt/);
    expect(fs.existsSync(path.join(dir, 'LOCK'))).toBe(false); // a failed open releases the lock
  });

  test('fsync: true acknowledges after fdatasync and replays the same', async () => {
    const dir = tempDir();
    let store = await open(dir, { fsync: true });
    const items = store.collection<Item>('items', ITEMS);
    await Promise.all(Array.from({ length: 100 }, (_, i) => items.insertOne({ _id: `f${i}`, accountId: 'acc', n: i })));
    await store.close();
    store = await open(dir);
    expect(await store.collection<Item>('items', ITEMS).countDocuments({ accountId: 'acc' })).toBe(100);
    await store.close();
  });

  test('concurrent writes are group-committed: every promise resolves and every record is on disk', async () => {
    const dir = tempDir();
    let store = await open(dir);
    const items = store.collection<Item>('items', ITEMS);
    await Promise.all(Array.from({ length: 2000 }, (_, i) => items.insertOne({ _id: `g${i}`, accountId: `acc${i % 7}`, n: i })));
    await store.close();
    expect(fs.readFileSync(path.join(dir, JOURNAL), 'utf8').trim().split('\n')).toHaveLength(2000);
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

  // Their speed is measured by packages/store/bench/embedded.js, not here.
  test('tenant-partitioned queries over 100,000 documents: a page of 50 plus counts, point lookups by the unique index', async () => {
    const store = await open(tempDir());
    const schema = new mongoose.Schema(
      { _id: String, accountId: String, email: String, status: String, registeredAt: String, tags: [String] },
      { versionKey: false },
    );
    schema.index({ accountId: 1, email: 1 }, { unique: true });
    const subs = store.collection<{ _id: string; accountId: string; email: string; status: string; registeredAt: string }>('subs', schema);
    const docs = Array.from({ length: 100_000 }, (_, i) => ({
      _id: `s-${String(i).padStart(6, '0')}`,
      accountId: i % 10 === 0 ? 'other' : 'acc',
      email: `user${i}@example.com`,
      status: i % 3 === 0 ? 'unsubscribed' : 'active',
      registeredAt: new Date(1_700_000_000_000 + i * 1000).toISOString(),
      tags: i % 2 ? ['a'] : [],
    }));
    for (let i = 0; i < docs.length; i += 10_000) await subs.insertMany(docs.slice(i, i + 10_000));

    const page = async () => {
      const filter = { accountId: 'acc', status: 'active' };
      const [rows, total, byStatus] = await Promise.all([
        subs.find(filter, { sort: { registeredAt: -1, _id: -1 }, skip: 100, limit: 50 }),
        subs.countDocuments(filter),
        subs.countDocuments({ accountId: 'acc' }),
      ]);
      return { rows, total, byStatus };
    };
    const result = await page();
    expect(result.rows).toHaveLength(50);
    expect(result.rows.map((r) => r._id)).toEqual(docs.filter((d) => d.accountId === 'acc' && d.status === 'active').reverse().slice(100, 150).map((d) => d._id));
    expect(result.total).toBe(60_000);
    expect(result.byStatus).toBe(90_000);
    for (const i of [1, 2, 99_999]) expect((await subs.findOne({ accountId: 'acc', email: `user${i}@example.com` }))?._id).toBe(docs[i]._id);
    expect(await subs.findOne({ accountId: 'other', email: 'user1@example.com' })).toBeNull();
    await store.close();
  }, 120_000);
});
