// The store contract: every behaviour services rely on, run against every adapter available.
// Embedded always; MongoDB when MONGODB_URI is set (it must be a replica set, e.g.
// `mongod --replSet rs0`, because transactions, insertMany and bulkWrite atomicity need one).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { DocumentValidationError, DuplicateKeyError, mongoose, openStore, Store } from '../src';

interface Sub {
  _id: string;
  accountId: string;
  email: string;
  status?: string;
  age?: number;
  tags?: string[];
  fields?: Record<string, unknown>;
  items?: { sku: string; qty: number }[];
  profile?: { city?: string; score?: number };
  code?: string;
  joinedAt?: Date;
}

function subscriberSchema() {
  const schema = new mongoose.Schema(
    {
      _id: String,
      accountId: { type: String, required: true },
      email: { type: String, required: true, lowercase: true, trim: true },
      status: { type: String, enum: ['active', 'unsubscribed', 'bounced'], default: 'active' },
      age: { type: Number, min: 0 },
      tags: [String],
      fields: mongoose.Schema.Types.Mixed,
      items: [{ _id: false, sku: String, qty: Number }],
      profile: { city: String, score: Number },
      code: { type: String, unique: true, sparse: true },
      joinedAt: Date,
    },
    { versionKey: false },
  );
  schema.index({ accountId: 1, email: 1 }, { unique: true });
  schema.index({ accountId: 1, status: 1 });
  return schema;
}

function eventSchema() {
  return new mongoose.Schema({ _id: String, accountId: { type: String, required: true }, kind: String, n: Number }, { versionKey: false });
}

interface Adapter {
  name: 'embedded' | 'mongo';
  /** Why this leg does not run here (it is reported as skipped, never as passed). */
  skipped?: string;
  open(): Promise<Store>;
  cleanup(store: Store): Promise<void>;
}

const tempDirs: string[] = [];
const mongoUri = process.env.MONGODB_URI;
const adapters: Adapter[] = [
  {
    name: 'embedded',
    async open() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-contract-'));
      tempDirs.push(dir);
      return openStore({ dataDir: dir });
    },
    async cleanup() {},
  },
  {
    name: 'mongo',
    skipped: mongoUri ? undefined : 'MONGODB_URI is unset; set it to a replica set URI to run the MongoDB leg',
    async open() {
      // a throwaway database per run, dropped afterwards
      const url = new URL(mongoUri!);
      url.pathname = `/store_contract_${Date.now()}_${process.pid}`;
      return openStore({ mongodbUri: url.toString(), dataDir: '' });
    },
    async cleanup(store) {
      await (store as unknown as { connection: mongoose.Connection }).connection.dropDatabase();
    },
  },
];

afterAll(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

// A leg that cannot run here is a skipped describe whose title says why: reported with its reason at
// the end of `npm test` (scripts/jest-summary-reporter.js), never as passed.
for (const adapter of adapters) (adapter.skipped ? describe.skip : describe)(adapter.skipped ? `${adapter.name} adapter (skipped: ${adapter.skipped})` : `${adapter.name} adapter`, () => {
  let store: Store;
  let seq = 0;
  const acc = 'acc-1';
  const other = 'acc-2';
  /** A fresh collection per test, so tests never see each other's data. */
  const subscribers = () => store.collection<Sub>(`subs_${++seq}`, subscriberSchema());
  const events = () => store.collection<{ _id: string; accountId: string; kind?: string; n?: number }>(`events_${++seq}`, eventSchema());
  const sub = (over: Partial<Sub> = {}): Sub => ({ _id: randomUUID(), accountId: acc, email: `${randomUUID()}@example.com`, ...over });

  beforeAll(async () => {
    store = await adapter.open();
    console.log(`@mailer/store contract: running against the ${adapter.name} adapter`);
  });
  afterAll(async () => {
    await adapter.cleanup(store);
    await store.close();
  });

  test('kind and ping', async () => {
    expect(store.kind).toBe(adapter.name);
    expect(await store.ping()).toBe(true);
  });

  test('collection(): same name returns the same collection; schemas must use string _id', () => {
    const schema = subscriberSchema();
    const a = store.collection(`same_${++seq}`, schema);
    expect(store.collection(a.name, schema)).toBe(a);
    expect(() => store.collection(`objid_${++seq}`, new mongoose.Schema({ n: Number }))).toThrow(/_id: String/);
  });

  describe('CRUD', () => {
    test('insertOne + findOne: cast, defaults, round trip of dates and nested values', async () => {
      const c = subscribers();
      const joinedAt = new Date('2024-05-01T10:00:00Z');
      await c.insertOne({ ...sub({ _id: 's1', email: '  Ann@Example.COM ' }), age: '41' as unknown as number, joinedAt, fields: { plan: 'pro', n: [1, 2] } });
      const got = await c.findOne({ _id: 's1' });
      expect(got).toEqual({
        _id: 's1',
        accountId: acc,
        email: 'ann@example.com',
        status: 'active',
        age: 41,
        tags: [],
        items: [],
        joinedAt,
        fields: { plan: 'pro', n: [1, 2] },
      });
      expect(got!.joinedAt).toBeInstanceOf(Date);
      expect(await c.findOne({ _id: 'missing' })).toBeNull();
    });

    test('filters are cast through the schema like mongoose does', async () => {
      const c = subscribers();
      await c.insertOne(sub({ _id: 'x', email: 'bob@example.com', age: 30, joinedAt: new Date('2024-01-02T00:00:00Z') }));
      expect(await c.countDocuments({ email: 'BOB@example.com' })).toBe(1);
      expect(await c.countDocuments({ age: '30' })).toBe(1);
      expect(await c.countDocuments({ joinedAt: { $gt: '2024-01-01T00:00:00Z' } })).toBe(1);
    });

    test('find, countDocuments, deleteOne, deleteMany', async () => {
      const c = subscribers();
      await c.insertMany([sub({ _id: 'a', age: 1 }), sub({ _id: 'b', age: 2 }), sub({ _id: 'c', age: 3 }), sub({ _id: 'd', accountId: other, age: 4 })]);
      expect(await c.countDocuments({})).toBe(4);
      expect(await c.countDocuments({ accountId: acc })).toBe(3);
      expect((await c.find({ accountId: other })).map((d) => d._id)).toEqual(['d']);
      expect(await c.deleteOne({ accountId: acc, age: { $gte: 2 } })).toBe(1);
      expect(await c.deleteMany({ accountId: acc })).toBe(2);
      expect(await c.deleteMany({ accountId: acc })).toBe(0);
      expect(await c.countDocuments({})).toBe(1);
    });

    test('query operators: $in, $nin, $regex, $elemMatch, dotted paths, ranges, $exists, $or, $ne', async () => {
      const c = subscribers();
      await c.insertMany([
        sub({ _id: '1', email: 'ann@a.com', tags: ['vip', 'news'], items: [{ sku: 'x', qty: 1 }, { sku: 'y', qty: 5 }], profile: { city: 'Oslo', score: 10 }, status: 'active' }),
        sub({ _id: '2', email: 'bob@b.com', tags: ['news'], items: [{ sku: 'x', qty: 7 }], profile: { city: 'Rome', score: 3 }, status: 'bounced' }),
        sub({ _id: '3', email: 'cid@a.com', tags: [], profile: { city: 'Oslo' }, status: 'unsubscribed', code: 'C3' }),
      ]);
      const ids = async (filter: Record<string, unknown>) => (await c.find(filter, { sort: { _id: 1 } })).map((d) => d._id);
      expect(await ids({ accountId: acc, status: { $in: ['active', 'bounced'] } })).toEqual(['1', '2']);
      expect(await ids({ accountId: acc, status: { $nin: ['active', 'bounced'] } })).toEqual(['3']);
      expect(await ids({ accountId: acc, email: { $regex: '@a\\.com$' } })).toEqual(['1', '3']);
      expect(await ids({ accountId: acc, email: /^B/i })).toEqual(['2']);
      expect(await ids({ accountId: acc, tags: 'vip' })).toEqual(['1']);
      expect(await ids({ accountId: acc, tags: { $size: 0 } })).toEqual(['3']);
      expect(await ids({ accountId: acc, items: { $elemMatch: { sku: 'x', qty: { $gt: 5 } } } })).toEqual(['2']);
      expect(await ids({ accountId: acc, 'items.sku': 'y' })).toEqual(['1']);
      expect(await ids({ accountId: acc, 'profile.city': 'Oslo', 'profile.score': { $gte: 5 } })).toEqual(['1']);
      expect(await ids({ accountId: acc, 'profile.score': { $exists: false } })).toEqual(['3']);
      expect(await ids({ accountId: acc, code: { $exists: true } })).toEqual(['3']);
      expect(await ids({ accountId: acc, $or: [{ status: 'bounced' }, { 'profile.score': { $gt: 9 } }] })).toEqual(['1', '2']);
      expect(await ids({ accountId: acc, status: { $ne: 'active' } })).toEqual(['2', '3']);
      expect(await ids({ accountId: { $in: [acc, other] }, 'profile.city': 'Rome' })).toEqual(['2']);
      expect(await ids({ accountId: other })).toEqual([]);
    });

    test('update operators: $set $unset $inc $push $pull $addToSet, counts', async () => {
      const c = subscribers();
      await c.insertOne(sub({ _id: 'u', age: 1, tags: ['a', 'b'], profile: { city: 'Oslo', score: 1 }, items: [{ sku: 'x', qty: 1 }] }));
      let r = await c.updateOne({ _id: 'u' }, { $set: { 'profile.city': 'Rome', status: 'bounced' }, $inc: { age: 2, 'profile.score': 5 } });
      expect(r).toEqual({ matchedCount: 1, modifiedCount: 1 });
      r = await c.updateOne({ _id: 'u' }, { $push: { tags: 'c', items: { sku: 'y', qty: 2 } }, $unset: { 'profile.score': '' } });
      expect(r.modifiedCount).toBe(1);
      await c.updateOne({ _id: 'u' }, { $pull: { tags: 'a', items: { sku: 'x' } } });
      await c.updateOne({ _id: 'u' }, { $addToSet: { tags: 'b' } });
      await c.updateOne({ _id: 'u' }, { $addToSet: { tags: 'z' } });
      const doc = await c.findOne({ _id: 'u' });
      expect(doc).toMatchObject({ age: 3, status: 'bounced', tags: ['b', 'c', 'z'], profile: { city: 'Rome' }, items: [{ sku: 'y', qty: 2 }] });
      expect(doc!.profile).not.toHaveProperty('score');
      // setting what is already there matches without modifying
      expect(await c.updateOne({ _id: 'u' }, { $set: { age: 3 } })).toEqual({ matchedCount: 1, modifiedCount: 0 });
      expect(await c.updateOne({ _id: 'nope' }, { $set: { age: 3 } })).toEqual({ matchedCount: 0, modifiedCount: 0 });
    });

    test('updateMany and an update without operators ($set, as mongoose does)', async () => {
      const c = subscribers();
      await c.insertMany([sub({ _id: '1', status: 'active' }), sub({ _id: '2', status: 'active' }), sub({ _id: '3', status: 'bounced' })]);
      expect(await c.updateMany({ accountId: acc, status: 'active' }, { $set: { status: 'unsubscribed' } })).toEqual({ matchedCount: 2, modifiedCount: 2 });
      expect(await c.countDocuments({ status: 'unsubscribed' })).toBe(2);
      await c.updateOne({ _id: '3' }, { age: 9 });
      expect(await c.findOne({ _id: '3' })).toMatchObject({ age: 9, status: 'bounced' });
    });

    test('findOneAndUpdate returns the document before (default) or after', async () => {
      const c = subscribers();
      await c.insertOne(sub({ _id: 'f', age: 1 }));
      expect((await c.findOneAndUpdate({ _id: 'f' }, { $inc: { age: 1 } }))!.age).toBe(1);
      expect((await c.findOneAndUpdate({ _id: 'f' }, { $inc: { age: 1 } }, { returnDocument: 'after' }))!.age).toBe(3);
      expect(await c.findOneAndUpdate({ _id: 'none' }, { $inc: { age: 1 } })).toBeNull();
    });
  });

  test('sort, skip, limit, projection', async () => {
    const c = subscribers();
    await c.insertMany(Array.from({ length: 30 }, (_, i) => sub({ _id: `s${String(i).padStart(2, '0')}`, age: i % 5, email: `u${i}@x.com`, profile: { city: i % 2 ? 'A' : 'B', score: i } })));
    const page = await c.find({ accountId: acc }, { sort: { age: -1, _id: 1 }, skip: 2, limit: 4 });
    expect(page.map((d) => d._id)).toEqual(['s14', 's19', 's24', 's29']);
    const byNested = await c.find({ accountId: acc }, { sort: { 'profile.city': 1, 'profile.score': -1 }, limit: 2 });
    expect(byNested.map((d) => d._id)).toEqual(['s29', 's27']);
    const included = await c.find({ _id: 's01' }, { projection: { email: 1, 'profile.city': 1 } });
    expect(included).toEqual([{ _id: 's01', email: 'u1@x.com', profile: { city: 'A' } }]);
    const excluded = await c.findOne({ _id: 's01' }, { projection: { items: 0, tags: 0, profile: 0, _id: 0 } });
    expect(excluded).toEqual({ accountId: acc, email: 'u1@x.com', status: 'active', age: 1 });
    expect((await c.findOne({ accountId: acc }, { sort: { age: 1, _id: -1 } }))!._id).toBe('s25');
    expect(await c.find({ accountId: acc }, { skip: 28 })).toHaveLength(2);
  });

  test('scan: every match once, in batches of at most batchSize, sorted and projected; leaving early is allowed', async () => {
    const c = subscribers();
    await c.insertMany(Array.from({ length: 25 }, (_, i) => sub({ _id: `s${String(i).padStart(2, '0')}`, age: i % 3, email: `u${i}@x.com` })));
    await c.insertOne(sub({ _id: 'elsewhere', accountId: other, age: 0 }));
    const batches: string[][] = [];
    for await (const batch of c.scan({ accountId: acc, age: { $lt: 2 } }, { sort: { age: -1, _id: 1 }, batchSize: 4, projection: { age: 1 } })) {
      for (const d of batch) expect(Object.keys(d).sort()).toEqual(['_id', 'age']);
      batches.push(batch.map((d) => d._id));
    }
    const expected = Array.from({ length: 25 }, (_, i) => i)
      .filter((i) => i % 3 < 2)
      .sort((a, b) => (b % 3) - (a % 3) || a - b)
      .map((i) => `s${String(i).padStart(2, '0')}`);
    expect(batches.flat()).toEqual(expected);
    for (const b of batches) expect(b.length).toBeLessThanOrEqual(4);
    for await (const first of c.scan({ accountId: acc })) {
      expect(first.length).toBeGreaterThan(0);
      break;
    }
    expect(await c.countDocuments({ accountId: acc })).toBe(25);
  });

  describe('unique indexes', () => {
    test('compound (accountId, email): DuplicateKeyError, nothing written, other accounts unaffected', async () => {
      const c = subscribers();
      await c.insertOne(sub({ _id: 'a', email: 'dup@x.com' }));
      const err = await c.insertOne(sub({ _id: 'b', email: 'DUP@x.com' })).catch((e) => e);
      expect(err).toBeInstanceOf(DuplicateKeyError);
      expect(err.code).toBe(11000);
      expect(err.key).toEqual({ accountId: acc, email: 'dup@x.com' });
      expect(await c.countDocuments({})).toBe(1);
      await c.insertOne(sub({ _id: 'c', accountId: other, email: 'dup@x.com' }));
      expect(await c.countDocuments({})).toBe(2);
    });

    test('simple sparse unique field, _id, and updates that would collide', async () => {
      const c = subscribers();
      await c.insertMany([sub({ _id: 'a', code: 'K1' }), sub({ _id: 'b' }), sub({ _id: 'c' })]); // sparse: two without code are fine
      await expect(c.insertOne(sub({ _id: 'd', code: 'K1' }))).rejects.toBeInstanceOf(DuplicateKeyError);
      await expect(c.insertOne(sub({ _id: 'a' }))).rejects.toBeInstanceOf(DuplicateKeyError);
      const before = await c.findOne({ _id: 'b' });
      await expect(c.updateOne({ _id: 'b' }, { $set: { code: 'K1', age: 5 } })).rejects.toBeInstanceOf(DuplicateKeyError);
      expect(await c.findOne({ _id: 'b' })).toEqual(before);
      // freeing a key makes it available again
      await c.updateOne({ _id: 'a' }, { $unset: { code: '' } });
      await c.updateOne({ _id: 'b' }, { $set: { code: 'K1' } });
      expect((await c.findOne({ code: 'K1' }))!._id).toBe('b');
      expect(await c.countDocuments({})).toBe(3);
    });

    test('updateMany that collides half-way writes nothing', async () => {
      const c = subscribers();
      await c.insertMany([sub({ _id: 'a', email: 'a@x.com', status: 'active' }), sub({ _id: 'b', email: 'b@x.com', status: 'active' })]);
      await expect(c.updateMany({ accountId: acc }, { $set: { email: 'same@x.com', status: 'bounced' } })).rejects.toBeInstanceOf(DuplicateKeyError);
      if (adapter.name === 'embedded') {
        // embedded: all-or-nothing (MongoDB itself may keep the first document's update)
        expect(await c.countDocuments({ status: 'bounced' })).toBe(0);
      }
    });
  });

  describe('schema validation', () => {
    test('insert: DocumentValidationError listing the problems, nothing written', async () => {
      const c = subscribers();
      const err = await c.insertOne({ _id: 'v', accountId: acc, age: -5, status: 'weird' } as unknown as Sub).catch((e) => e);
      expect(err).toBeInstanceOf(DocumentValidationError);
      expect(err.problems.map((p: { path: string }) => p.path).sort()).toEqual(['age', 'email', 'status']);
      expect(await c.countDocuments({})).toBe(0);
      await expect(c.insertMany([sub({ _id: 'ok' }), { _id: 'bad', accountId: acc } as Sub])).rejects.toBeInstanceOf(DocumentValidationError);
      expect(await c.countDocuments({})).toBe(0);
    });

    test('update: invalid result rejected and document unchanged', async () => {
      const c = subscribers();
      await c.insertOne(sub({ _id: 'v', age: 3 }));
      const before = await c.findOne({ _id: 'v' });
      await expect(c.updateOne({ _id: 'v' }, { $set: { status: 'weird' } })).rejects.toBeInstanceOf(DocumentValidationError);
      await expect(c.updateOne({ _id: 'v' }, { $set: { age: 'old' } })).rejects.toBeInstanceOf(DocumentValidationError);
      if (adapter.name === 'embedded') {
        // embedded re-validates the whole resulting document; mongoose's update validators skip $inc
        await expect(c.updateOne({ _id: 'v' }, { $inc: { age: -10 } })).rejects.toBeInstanceOf(DocumentValidationError);
      }
      expect(await c.findOne({ _id: 'v' })).toEqual(before);
    });
  });

  describe('upsert', () => {
    test('inserts from the filter equalities + update + $setOnInsert + defaults, then matches', async () => {
      const c = subscribers();
      const r1 = await c.updateOne(
        { _id: 'up', accountId: acc, email: 'up@x.com' },
        { $set: { age: 5 }, $setOnInsert: { tags: ['new'] } },
        { upsert: true },
      );
      expect(r1).toEqual({ matchedCount: 0, modifiedCount: 0, upsertedId: 'up' });
      expect(await c.findOne({ _id: 'up' })).toMatchObject({ accountId: acc, email: 'up@x.com', age: 5, tags: ['new'], status: 'active' });
      const r2 = await c.updateOne({ _id: 'up', accountId: acc, email: 'up@x.com' }, { $set: { age: 6 }, $setOnInsert: { tags: ['again'] } }, { upsert: true });
      expect(r2).toEqual({ matchedCount: 1, modifiedCount: 1 });
      expect(await c.findOne({ _id: 'up' })).toMatchObject({ age: 6, tags: ['new'] });
    });

    test('an upsert can name its _id with $setOnInsert (the sync path: upsert by account and email)', async () => {
      const c = subscribers();
      const upsert = (id: string, age: number) =>
        c.updateOne({ accountId: acc, email: 'sync@x.com' }, { $set: { age }, $setOnInsert: { _id: id, tags: ['synced'] } }, { upsert: true });
      expect(await upsert('sync-1', 1)).toEqual({ matchedCount: 0, modifiedCount: 0, upsertedId: 'sync-1' });
      expect(await upsert('sync-2', 2)).toEqual({ matchedCount: 1, modifiedCount: 1 });
      expect(await c.find({})).toEqual([expect.objectContaining({ _id: 'sync-1', age: 2, tags: ['synced'] })]);
    });

    test('an upsert naming no _id gets a string UUID; findOneAndUpdate upsert', async () => {
      const c = subscribers();
      const r = await c.updateOne({ accountId: acc, email: 'gen@x.com' }, { $set: { age: 1 } }, { upsert: true });
      expect(r.upsertedId).toMatch(/^[0-9a-f-]{36}$/);
      expect((await c.findOne({ email: 'gen@x.com' }))!._id).toBe(r.upsertedId);
      const after = await c.findOneAndUpdate({ accountId: acc, email: 'f@x.com' }, { $inc: { age: 1 } }, { upsert: true, returnDocument: 'after' });
      expect(after).toMatchObject({ accountId: acc, email: 'f@x.com', age: 1 });
      expect(typeof after!._id).toBe('string');
      expect(await c.findOneAndUpdate({ accountId: acc, email: 'g@x.com' }, { $inc: { age: 1 } }, { upsert: true })).toBeNull();
      expect(await c.countDocuments({})).toBe(3);
    });

    test('an upsert that would violate a unique index fails and writes nothing', async () => {
      const c = subscribers();
      await c.insertOne(sub({ _id: 'a', code: 'K' }));
      await expect(c.updateOne({ _id: 'b', accountId: acc, email: 'b@x.com' }, { $set: { code: 'K' } }, { upsert: true })).rejects.toBeInstanceOf(DuplicateKeyError);
      expect(await c.countDocuments({})).toBe(1);
    });
  });

  describe('atomic batches', () => {
    test('insertMany is all-or-nothing', async () => {
      const c = subscribers();
      await c.insertOne(sub({ _id: 'taken', email: 'taken@x.com' }));
      await expect(c.insertMany([sub({ _id: 'n1' }), sub({ _id: 'n2' }), sub({ _id: 'n3', email: 'taken@x.com' }), sub({ _id: 'n4' })])).rejects.toBeInstanceOf(DuplicateKeyError);
      expect(await c.countDocuments({})).toBe(1);
      // duplicates inside the batch itself too
      await expect(c.insertMany([sub({ _id: 'm1', email: 'm@x.com' }), sub({ _id: 'm2', email: 'm@x.com' })])).rejects.toBeInstanceOf(DuplicateKeyError);
      expect(await c.countDocuments({})).toBe(1);
    });

    test('bulkWrite applies ops in order and reports counts', async () => {
      const c = subscribers();
      await c.insertMany([sub({ _id: 'a', age: 1 }), sub({ _id: 'b', age: 1 }), sub({ _id: 'c', age: 1 })]);
      const r = await c.bulkWrite([
        { insertOne: { document: sub({ _id: 'd', age: 1 }) } },
        { updateOne: { filter: { _id: 'a' }, update: { $inc: { age: 1 } } } },
        { updateMany: { filter: { age: 1 }, update: { $set: { status: 'bounced' } } } },
        { updateOne: { filter: { _id: 'e', accountId: acc, email: 'e@x.com' }, update: { $set: { age: 7 } }, upsert: true } },
        { deleteOne: { filter: { _id: 'b' } } },
        { deleteMany: { filter: { status: 'bounced', age: 1 } } },
      ]);
      expect(r).toEqual({ insertedCount: 1, matchedCount: 4, modifiedCount: 4, deletedCount: 3, upsertedCount: 1 });
      expect((await c.find({}, { sort: { _id: 1 } })).map((d) => [d._id, d.age])).toEqual([
        ['a', 2],
        ['e', 7],
      ]);
    });

    test('bulkWrite with one failing op applies none', async () => {
      const c = subscribers();
      await c.insertMany([sub({ _id: 'a', age: 1, code: 'K' }), sub({ _id: 'b', age: 1 })]);
      const before = await c.find({}, { sort: { _id: 1 } });
      await expect(
        c.bulkWrite([
          { updateOne: { filter: { _id: 'a' }, update: { $inc: { age: 1 } } } },
          { insertOne: { document: sub({ _id: 'c' }) } },
          { deleteOne: { filter: { _id: 'b' } } },
          { updateOne: { filter: { _id: 'c' }, update: { $set: { code: 'K' } } } },
        ]),
      ).rejects.toBeInstanceOf(DuplicateKeyError);
      expect(await c.find({}, { sort: { _id: 1 } })).toEqual(before);
      await expect(
        c.bulkWrite([{ deleteMany: { filter: {} } }, { insertOne: { document: { _id: 'bad', accountId: acc } } }]),
      ).rejects.toBeInstanceOf(DocumentValidationError);
      expect(await c.countDocuments({})).toBe(2);
    });
  });

  describe('transactions', () => {
    test('commit: writes to several collections land together', async () => {
      const c = subscribers();
      const e = events();
      const result = await store.transaction(async (tx) => {
        await c.insertOne(sub({ _id: 't1' }), { tx });
        await e.insertOne({ _id: 'e1', accountId: acc, kind: 'subscriber.created' }, { tx });
        await c.updateOne({ _id: 't1' }, { $set: { age: 4 } }, { tx });
        return 'done';
      });
      expect(result).toBe('done');
      expect(await c.findOne({ _id: 't1' })).toMatchObject({ age: 4 });
      expect(await e.countDocuments({ accountId: acc })).toBe(1);
    });

    test('rollback on throw: nothing lands; readers never see uncommitted writes', async () => {
      const c = subscribers();
      const e = events();
      await c.insertOne(sub({ _id: 'keep', age: 1 }));
      const err = await store
        .transaction(async (tx) => {
          await c.insertOne(sub({ _id: 't2' }), { tx });
          await c.updateOne({ _id: 'keep' }, { $set: { age: 99 } }, { tx });
          await e.insertOne({ _id: 'e2', accountId: acc }, { tx });
          // reads (which take no tx) see committed state only
          expect(await c.findOne({ _id: 't2' })).toBeNull();
          expect((await c.findOne({ _id: 'keep' }))!.age).toBe(1);
          throw new Error('boom');
        })
        .catch((x) => x);
      expect(err.message).toBe('boom');
      expect(await c.findOne({ _id: 't2' })).toBeNull();
      expect((await c.findOne({ _id: 'keep' }))!.age).toBe(1);
      expect(await e.countDocuments({})).toBe(0);
    });

    test('a failed write aborts the transaction', async () => {
      const c = subscribers();
      await c.insertOne(sub({ _id: 'a', email: 'a@x.com' }));
      await expect(
        store.transaction(async (tx) => {
          await c.insertOne(sub({ _id: 'b' }), { tx });
          await c.insertOne(sub({ _id: 'c', email: 'a@x.com' }), { tx });
        }),
      ).rejects.toBeInstanceOf(DuplicateKeyError);
      expect(await c.countDocuments({})).toBe(1);
    });

    test('writes inside a transaction see the transaction’s own earlier writes', async () => {
      const c = subscribers();
      await store.transaction(async (tx) => {
        await c.insertOne(sub({ _id: 'x', age: 1 }), { tx });
        expect(await c.updateMany({ accountId: acc }, { $inc: { age: 1 } }, { tx })).toEqual({ matchedCount: 1, modifiedCount: 1 });
        expect(await c.deleteOne({ _id: 'x', age: 2 }, { tx })).toBe(1);
        await c.insertOne(sub({ _id: 'x', age: 10 }), { tx });
      });
      expect((await c.findOne({ _id: 'x' }))!.age).toBe(10);
    });
  });

  test('aggregate: the supported subset', async () => {
    const c = subscribers();
    await c.insertMany([
      sub({ _id: '1', status: 'active', age: 10, tags: ['a', 'b'] }),
      sub({ _id: '2', status: 'active', age: 20, tags: ['b'] }),
      sub({ _id: '3', status: 'bounced', age: 30, tags: [] }),
      sub({ _id: '4', accountId: other, status: 'active', age: 40 }),
    ]);
    const byStatus = await c.aggregate([
      { $match: { accountId: acc } },
      { $group: { _id: '$status', n: { $sum: 1 }, avgAge: { $avg: '$age' } } },
      { $sort: { _id: 1 } },
    ]);
    expect(byStatus).toEqual([
      { _id: 'active', n: 2, avgAge: 15 },
      { _id: 'bounced', n: 1, avgAge: 30 },
    ]);
    const tags = await c.aggregate([
      { $match: { accountId: acc } },
      { $unwind: '$tags' },
      { $group: { _id: '$tags', n: { $sum: 1 } } },
      { $sort: { n: -1, _id: 1 } },
      { $limit: 1 },
    ]);
    expect(tags).toEqual([{ _id: 'b', n: 2 }]);
    const shaped = await c.aggregate([
      { $match: { accountId: acc } },
      { $sort: { age: -1 } },
      { $skip: 1 },
      { $addFields: { double: { $multiply: ['$age', 2] } } },
      { $project: { _id: 1, double: 1 } },
    ]);
    expect(shaped).toEqual([
      { _id: '2', double: 40 },
      { _id: '1', double: 20 },
    ]);
    const [facets] = await c.aggregate([
      { $match: { accountId: acc } },
      { $facet: { total: [{ $count: 'n' }], top: [{ $sort: { age: -1 } }, { $limit: 1 }, { $project: { _id: 1 } }] } },
    ]);
    expect(facets).toEqual({ total: [{ n: 3 }], top: [{ _id: '3' }] });
    // $bucket (reports): lower boundary inclusive, after a $project of the grouped value
    const buckets = await c.aggregate([
      { $match: { accountId: acc } },
      { $project: { _id: 0, a: '$age' } },
      { $bucket: { groupBy: '$a', boundaries: [9.5, 19.5, 29.5, 39.5], output: { n: { $sum: 1 } } } },
    ]);
    expect(buckets).toEqual([
      { _id: 9.5, n: 1 },
      { _id: 19.5, n: 1 },
      { _id: 29.5, n: 1 },
    ]);
    await expect(c.aggregate([{ $lookup: { from: 'x', localField: 'a', foreignField: 'b', as: 'c' } }])).rejects.toThrow(/not supported/);
  });

  test('null matches missing fields; empty objects kept only when the schema says minimize: false', async () => {
    const schema = new mongoose.Schema(
      { _id: String, subject: String, payload: mongoose.Schema.Types.Mixed, createdAt: Date, publishedAt: Date },
      { versionKey: false, minimize: false },
    );
    const outbox = store.collection<{ _id: string; subject: string; payload: unknown; createdAt: Date; publishedAt?: Date | null }>(`outbox_${++seq}`, schema);
    await outbox.insertMany([
      { _id: 'o1', subject: 's', payload: {}, createdAt: new Date(2) },
      { _id: 'o2', subject: 's', payload: { a: 1 }, createdAt: new Date(1), publishedAt: null },
      { _id: 'o3', subject: 's', payload: null, createdAt: new Date(3), publishedAt: new Date(5) },
    ]);
    const pending = await outbox.find({ publishedAt: null }, { sort: { createdAt: 1, _id: 1 }, limit: 10 });
    expect(pending.map((d) => d._id)).toEqual(['o2', 'o1']);
    expect(pending[1].payload).toEqual({});
    expect(await outbox.countDocuments({ publishedAt: { $ne: null } })).toBe(1);
    const minimized = subscribers();
    await minimized.insertOne(sub({ _id: 'm', fields: {} }));
    expect(await minimized.findOne({ _id: 'm' })).not.toHaveProperty('fields');
  });

  test('returned documents are copies; stored state cannot be mutated from outside', async () => {
    const c = subscribers();
    const input = sub({ _id: 'c1', tags: ['a'], fields: { nested: { k: 1 } }, profile: { city: 'Oslo' } });
    await c.insertOne(input);
    input.tags!.push('mutated');
    (input.fields!.nested as { k: number }).k = 2;
    const first = (await c.findOne({ _id: 'c1' }))!;
    expect(first.tags).toEqual(['a']);
    expect(first.fields).toEqual({ nested: { k: 1 } });
    first.tags!.push('x');
    first.profile!.city = 'Rome';
    (first.fields!.nested as { k: number }).k = 3;
    const [again] = await c.find({ accountId: acc });
    expect(again).toMatchObject({ tags: ['a'], profile: { city: 'Oslo' }, fields: { nested: { k: 1 } } });
    const setValue = { nested: { k: 5 } };
    await c.updateOne({ _id: 'c1' }, { $set: { fields: setValue } });
    setValue.nested.k = 6;
    const updated = await c.findOneAndUpdate({ _id: 'c1' }, { $set: { age: 1 } }, { returnDocument: 'after' });
    expect(updated!.fields).toEqual({ nested: { k: 5 } });
    updated!.fields!.nested = 'changed';
    const [agg] = await c.aggregate([{ $match: { _id: 'c1' } }]);
    agg.fields.nested.k = 7;
    expect((await c.findOne({ _id: 'c1' }))!.fields).toEqual({ nested: { k: 5 } });
    // a $project right after the $match (run before the copy on embedded) answers copies too
    const [projected] = await c.aggregate([{ $match: { _id: 'c1' } }, { $project: { fields: 1, tags: 1 } }]);
    expect(projected).toEqual({ _id: 'c1', fields: { nested: { k: 5 } }, tags: ['a'] });
    projected.fields.nested.k = 8;
    projected.tags.push('y');
    expect(await c.findOne({ _id: 'c1' })).toMatchObject({ fields: { nested: { k: 5 } }, tags: ['a'] });
  });
});
