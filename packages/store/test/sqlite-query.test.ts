// The SQL translation of filters and sorts against the reference semantics (mingo, as the JavaScript
// filter): random documents with missing and null values, arrays, nested objects and Dates, random
// filters mixing typed and untyped paths (a Map of subdocuments among the typed ones), operands of the
// right and of other types, literal and other regular expressions, $type, and $and/$or/$nor nesting. Every filter must select exactly the documents mingo selects, through find (cast), count
// and aggregate's $match (not cast), and every sorted page must be in MongoDB's order.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Query } from 'mingo';
import { mongoose, openStore, Store } from '../src';
import { compareValues } from '../src/sort';
import { getPath } from '../src/values';

let seed = 7;
const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
const maybe = <T>(v: () => T): T | undefined => (rand() < 0.25 ? undefined : v());

const STRINGS = ['', 'a', 'b', 'ab', 'B', 'z', 'é', 'a.b', 'bab'];
const NUMBERS = [-1, 0, 1, 1.5, 2, 10];
const DATES = [0, 1, 2, 10].map((d) => new Date(Date.UTC(2024, 0, 1 + d)));

const schema = new mongoose.Schema(
  {
    _id: String,
    s: String,
    n: Number,
    b: Boolean,
    d: Date,
    tags: { type: [String], default: undefined },
    nums: { type: [Number], default: undefined },
    profile: { city: String, score: Number },
    m: mongoose.Schema.Types.Mixed,
    items: { type: [{ _id: false, sku: String, qty: Number }], default: undefined },
    f: { type: Map, of: new mongoose.Schema({ t: String, x: Number }, { _id: false }), default: undefined },
  },
  { versionKey: false },
);
schema.index({ s: 1, n: 1 });
schema.index({ d: -1 });
// key columns of a nested path, a boolean and a sparse index's presence (src/sqlite/keys.ts)
schema.index({ 'profile.city': 1, b: 1 });
schema.index({ 'profile.score': 1 }, { sparse: true });

function randomDoc(i: number) {
  const doc: Record<string, unknown> = { _id: `d${String(i).padStart(3, '0')}` };
  const set = (k: string, v: unknown) => v !== undefined && (doc[k] = v);
  set('s', maybe(() => (rand() < 0.15 ? null : pick(STRINGS))));
  set('n', maybe(() => (rand() < 0.15 ? null : pick(NUMBERS))));
  set('b', maybe(() => (rand() < 0.15 ? null : rand() < 0.5)));
  set('d', maybe(() => (rand() < 0.15 ? null : pick(DATES))));
  set('tags', maybe(() => Array.from({ length: Math.floor(rand() * 3) }, () => pick(STRINGS))));
  set('nums', maybe(() => Array.from({ length: Math.floor(rand() * 3) }, () => pick(NUMBERS))));
  set('profile', maybe(() => ({ city: maybe(() => pick(STRINGS)), score: maybe(() => pick(NUMBERS)) })));
  set('m', maybe(() => pick<unknown>([pick(STRINGS), pick(NUMBERS), null, [pick(STRINGS), pick(NUMBERS)], { k: pick(STRINGS) }, pick(DATES)])));
  set('items', maybe(() => Array.from({ length: Math.floor(rand() * 3) }, () => ({ sku: pick(STRINGS), qty: pick(NUMBERS) }))));
  set('f', maybe(() => Object.fromEntries(['k1', 'k2'].filter(() => rand() < 0.7).map((k) => [k, { t: maybe(() => pick(STRINGS)), x: maybe(() => pick(NUMBERS)) }]))));
  return doc;
}

const PATHS: Record<string, () => unknown> = {
  s: () => pick(STRINGS),
  n: () => pick(NUMBERS),
  b: () => rand() < 0.5,
  d: () => pick(DATES),
  tags: () => pick(STRINGS),
  nums: () => pick(NUMBERS),
  'profile.city': () => pick(STRINGS),
  'profile.score': () => pick(NUMBERS),
  m: () => pick<unknown>([pick(STRINGS), pick(NUMBERS)]),
  'items.sku': () => pick(STRINGS),
  'f.k1.t': () => pick(STRINGS),
  'f.k2.x': () => pick(NUMBERS),
  _id: () => `d${String(Math.floor(rand() * 120)).padStart(3, '0')}`,
};

/** A value for a path: usually of its type, sometimes null or of another type (uncast filters only). */
function operand(path: string, cast: boolean): unknown {
  const r = rand();
  if (r < 0.1) return null;
  if (!cast && r < 0.25) return pick<unknown>([pick(STRINGS), pick(NUMBERS), pick(DATES), true]);
  return PATHS[path]();
}

function clause(cast: boolean, depth: number): Record<string, unknown> {
  if (depth < 2 && rand() < 0.2) {
    const op = pick(['$and', '$or', '$nor']);
    return { [op]: Array.from({ length: 1 + Math.floor(rand() * 3) }, () => clause(cast, depth + 1)) };
  }
  if (rand() < 0.1) {
    const q: Record<string, unknown> = { sku: rand() < 0.8 ? pick(STRINGS) : null };
    if (rand() < 0.6) q.qty = pick<unknown>([{ $gt: pick(NUMBERS) }, { $in: [pick(NUMBERS), pick(NUMBERS)] }, pick(NUMBERS), { $exists: false }]);
    return { items: { $elemMatch: q } };
  }
  const path = pick(Object.keys(PATHS));
  const v = () => operand(path, cast);
  const ops: (() => unknown)[] = [
    v,
    () => ({ $eq: v() }),
    () => ({ $ne: v() }),
    () => ({ $in: Array.from({ length: Math.floor(rand() * 3) }, v) }),
    () => ({ $nin: Array.from({ length: Math.floor(rand() * 3) }, v) }),
    () => ({ $gt: v() }),
    () => ({ $gte: v(), $lt: v() }),
    () => ({ $lte: v() }),
    () => ({ $exists: rand() < 0.5 }),
    // literal patterns become SQL (start, end, both, anywhere, escaped); the others stay JavaScript's
    () => ({ $regex: pick(['^a', 'b(?![\\s\\S])', '^ab(?![\\s\\S])', 'a', '^', '\\.', 'a\\.b', '^é', 'a.', '^[ab]', 'b$']) }),
    () => ({ $regex: pick(['^a', 'b']), $options: pick(['', 'i']) }),
    () => ({ $type: pick<unknown>(['string', 'number', 'date', 'bool', 'object', 'array', 2, 9, 'double']) }),
  ];
  if (rand() < 0.05) return { [pick(['f.k1', 'f.k2'])]: { $type: pick(['object', 3, 'string']) } };
  let cond = pick(ops)();
  // mongoose cannot cast null inside ranges: keep those for uncast filters
  if (cast && cond && typeof cond === 'object' && Object.values(cond).some((x) => x === null) && !('$eq' in cond) && !('$ne' in cond) && !('$in' in cond) && !('$nin' in cond)) cond = v();
  return { [path]: cond };
}

function randomFilter(cast: boolean): Record<string, unknown> {
  return Object.assign({}, ...Array.from({ length: 1 + Math.floor(rand() * 2) }, () => clause(cast, 0)));
}

let store: Store;
let dir: string;
let docs: Record<string, unknown>[];
const coll = () => store.collection<{ _id: string }>('docs', schema);

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-sqlite-query-'));
  store = await openStore({ dataDir: dir });
  await coll().insertMany(Array.from({ length: 120 }, (_, i) => randomDoc(i)) as { _id: string }[]);
  docs = await coll().find({}); // as stored (cast), the reference's input
});
afterAll(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const expected = (filter: Record<string, unknown>) => docs.filter((d) => new Query(filter).test(d)).map((d) => d._id as string).sort();

async function findsAsMingo(filters: number): Promise<void> {
  for (let i = 0; i < filters; i++) {
    const filter = randomFilter(true);
    let got: string[];
    try {
      got = (await coll().find(filter)).map((d) => d._id).sort();
    } catch (err) {
      // the store refuses what mongoose cannot cast (or an operator the path's type cannot take: $regex on a Date), as on MongoDB
      if ((err as Error).name === 'CastError' || /^Can't use \$/.test((err as Error).message)) continue;
      throw err;
    }
    const reference = docs.filter((d) => new Query(castLike(filter)).test(d)).map((d) => d._id as string).sort();
    expect({ filter, got }).toEqual({ filter, got: reference });
    expect({ filter, count: await coll().countDocuments(filter) }).toEqual({ filter, count: reference.length });
  }
}

test('find and countDocuments (cast filters) select what mingo selects', () => findsAsMingo(400));

test("aggregate's $match (not cast, operands of any type) selects what mingo selects", async () => {
  for (let i = 0; i < 500; i++) {
    const filter = randomFilter(false);
    const got = (await coll().aggregate<{ _id: string }>([{ $match: filter }])).map((d) => d._id).sort();
    expect({ filter, got }).toEqual({ filter, got: expected(filter) });
  }
});

test("sorted pages follow MongoDB's order across null, missing and values", async () => {
  for (const sort of [{ s: 1 }, { s: -1, _id: 1 }, { n: 1, _id: -1 }, { d: -1, _id: 1 }, { b: 1, _id: 1 }, { 'profile.score': -1, _id: 1 }, { tags: 1, _id: 1 }] as Record<string, 1 | -1>[]) {
    const page = await coll().find({ _id: { $gte: 'd010' } }, { sort, skip: 5, limit: 40 });
    const paths = Object.keys(sort);
    const key = (d: Record<string, unknown>) => paths.map((p) => getPath(d, p));
    for (let i = 1; i < page.length; i++) {
      const [a, b] = [key(page[i - 1]), key(page[i])];
      const c = paths.map((p, k) => compareValues(a[k], b[k]) * sort[p]).find((x) => x !== 0) ?? 0;
      if (!Array.isArray(a[0]) && !Array.isArray(b[0])) expect({ sort, a, b, ordered: c <= 0 }).toEqual({ sort, a, b, ordered: true });
    }
    expect(page).toHaveLength(40);
  }
});

test('after random updates of every path, filters still select what mingo selects', async () => {
  const paths = Object.keys(PATHS).filter((p) => !['_id', 'items.sku', 'tags', 'nums'].includes(p));
  for (let i = 0; i < 300; i++) {
    const p = pick(paths);
    const r = rand();
    const update = r < 0.2 ? { $unset: { [p]: '' } } : r < 0.3 ? { $set: { profile: randomDoc(i).profile ?? null } } : r < 0.4 && ['n', 'profile.score'].includes(p) ? { $inc: { [p]: 1 } } : { $set: { [p]: rand() < 0.15 ? null : PATHS[p]() } };
    await coll().updateOne({ _id: `d${String(Math.floor(rand() * 120)).padStart(3, '0')}` }, update);
  }
  docs = await coll().find({});
  await findsAsMingo(300);
});

/** The filter as mongoose casts it for this schema (Dates stay Dates; numbers in String paths become strings). */
function castLike(filter: Record<string, unknown>): Record<string, unknown> {
  return mongoose.model('probe').find().cast(mongoose.model('probe'), cloneFilter(filter) as never) as unknown as Record<string, unknown>;
}

function cloneFilter(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(cloneFilter);
  if (v && typeof v === 'object' && !(v instanceof Date)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, cloneFilter(x)]));
  return v;
}

mongoose.model('probe', schema);
