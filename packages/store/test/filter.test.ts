// The embedded engine's fast filter path must agree with mingo (its reference for MongoDB
// semantics) on every document, including the awkward ones: arrays, nulls, missing fields,
// mixed types, arrays along dotted paths.
import { Query } from 'mingo';
import { compileFilter, compileFilters } from '../src/filter';
import { sortPage } from '../src/sort';

function rng(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}

describe('fast filter path agrees with mingo', () => {
  const rand = rng(42);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)];
  const scalars: unknown[] = [0, 1, 2, 5, -1, 'a', 'b', 'ab', 'B', '', true, false, null, new Date(1000), new Date(2000)];
  const value = (depth = 0): unknown => {
    const r = rand();
    if (r < 0.55) return pick(scalars);
    if (r < 0.7) return [pick(scalars), pick(scalars)];
    if (r < 0.75) return [];
    if (depth < 1 && r < 0.88) return { c: value(depth + 1), d: pick(scalars) };
    if (depth < 1) return [{ c: value(depth + 1) }, { c: pick(scalars) }];
    return pick(scalars);
  };
  // arrays of sub-documents (the segment projection's orders with their items), with awkward elements
  const item = (): unknown => (rand() < 0.9 ? { p: pick(scalars), ...(rand() < 0.3 ? { q: pick(scalars) } : {}) } : pick([null, 'x', [{ p: 'a' }]]));
  const element = (): unknown => {
    const r = rand();
    if (r < 0.85) {
      const el: Record<string, unknown> = {};
      if (rand() < 0.9) el.s = rand() < 0.85 ? pick(scalars) : [pick(scalars), pick(scalars)];
      if (rand() < 0.9) el.n = pick(scalars);
      if (rand() < 0.8) el.it = rand() < 0.9 ? Array.from({ length: Math.floor(rand() * 3) }, item) : pick([null, { p: 'a' }, 'a']);
      if (rand() < 0.2) el.sub = { t: pick(scalars) };
      return el;
    }
    return pick([null, 1, 'a', new Date(1000), [{ s: 'a' }], []]);
  };
  const orders = (): unknown => (rand() < 0.9 ? Array.from({ length: Math.floor(rand() * 4) }, element) : pick([null, { s: 'a' }, 'a', 5]));
  const docs = Array.from({ length: 300 }, (_, i) => {
    const doc: Record<string, unknown> = { _id: `d${i}` };
    for (const f of ['a', 'b', 'tags']) if (rand() < 0.85) doc[f] = value();
    if (rand() < 0.9) doc.o = orders();
    if (rand() < 0.3) doc.w = { o: orders() };
    return doc as { _id: string };
  });

  const operand = () => pick(scalars.filter((s) => s !== null));
  const conditions: (() => [string, unknown])[] = [
    () => [pick(['a', 'b', 'b.c', 'tags', 'b.d']), operand()],
    () => [pick(['a', 'b.c', 'tags']), { $eq: operand() }],
    () => [pick(['a', 'b.c', 'tags']), { $ne: operand() }],
    () => [pick(['a', 'b.c', 'tags']), { $in: [operand(), operand()] }],
    () => [pick(['a', 'b.c', 'tags']), { $nin: [operand(), operand()] }],
    () => [pick(['a', 'b.c', 'tags']), { [pick(['$gt', '$gte', '$lt', '$lte'])]: operand() }],
    () => [pick(['a', 'b.c']), { $gt: pick([0, 'a', new Date(1500)]), $lte: pick([5, 'b', new Date(2000)]) }],
    () => [pick(['a', 'b', 'b.c', 'tags']), { $exists: rand() < 0.5 }],
    () => [pick(['a', 'b.c', 'tags']), pick([/^a/, /b/i, { $regex: '^A', $options: 'i' }, { $regex: 'b' }])],
    () => [pick(['a', 'b.c', 'tags']), null],
    () => [pick(['a', 'b.c', 'tags']), pick([{ $eq: null }, { $ne: null }])],
    () => [pick(['b']), { $elemMatch: { c: operand() } }],
    // document queries inside $elemMatch, nested ones, logical operators inside, dotted paths to and through arrays
    () => [pick(['o', 'w.o', 'o.it']), { $elemMatch: elemQuery() }],
    () => [pick(['o', 'w.o']), { $elemMatch: { ...elemQuery(), it: { $elemMatch: { p: pick([operand(), { $in: [operand(), operand()] }, { $gte: operand() }]) } } } }],
    () => [pick(['o', 'w.o']), { $elemMatch: { $or: [elemQuery(), elemQuery()] } }],
    () => [pick(['o', 'w.o']), { $elemMatch: { $nor: [elemQuery()], ...elemQuery() } }],
    () => [pick(['o', 'w.o']), { $elemMatch: { $and: [elemQuery(), { 'sub.t': operand() }] } }],
    () => [pick(['o']), { $elemMatch: { 'it.p': operand() } }],
  ];
  function elemQuery(): Record<string, unknown> {
    const parts: [string, unknown][] = [
      ['s', pick([operand(), { $in: [operand(), operand()] }, { $nin: [operand()] }, { $ne: operand() }, null])],
      ['n', pick([{ [pick(['$gt', '$gte', '$lt', '$lte'])]: operand() }, { $gte: pick([0, 'a', new Date(1000)]), $lt: pick([5, 'b', new Date(2000)]) }, { $exists: rand() < 0.5 }])],
      ['it', pick([{ $exists: true }, { $eq: null }])],
    ];
    return Object.fromEntries(parts.filter(() => rand() < 0.6).concat([pick(parts)]));
  }
  const filter = (): Record<string, unknown> => {
    const f: Record<string, unknown> = {};
    const n = 1 + Math.floor(rand() * 2);
    for (let i = 0; i < n; i++) {
      const [k, v] = pick(conditions)();
      f[k] = v;
    }
    if (rand() < 0.2) f.$or = [Object.fromEntries([pick(conditions)()]), Object.fromEntries([pick(conditions)()])];
    if (rand() < 0.1) f.$and = [Object.fromEntries([pick(conditions)()])];
    if (rand() < 0.15) f.$nor = [Object.fromEntries([pick(conditions)()]), Object.fromEntries([pick(conditions)()])];
    return f;
  };

  test('4,000 random filters over 300 random documents', () => {
    let compared = 0;
    for (let i = 0; i < 4000; i++) {
      const f = filter();
      const reference = new Query(f);
      const fast = compileFilter(f);
      for (const doc of docs) {
        const expected = reference.test(doc);
        const got = fast(doc as any);
        if (got !== expected) throw new Error(`mismatch for filter ${JSON.stringify(f)} on ${JSON.stringify(doc)}: expected ${expected}`);
        compared++;
      }
    }
    expect(compared).toBe(1200000);
  });

  // A shared scan compiles its filters together (compileFilters): sub-filters they have in common
  // are one memoized function. Filters built from common parts (as a segment preview's are), each
  // document tested by all of them in turn as runScan does, must still agree with mingo.
  test('1,000 groups of filters sharing parts, compiled together, over 300 random documents', () => {
    let compared = 0;
    for (let i = 0; i < 1000; i++) {
      const a = filter();
      const b = filter();
      const group = [a, { $and: [a, b] }, { $nor: [a, b] }, { $or: [b, a] }, { ...b, $and: [a] }, b];
      const references = group.map((f) => new Query(f));
      const { predicates, reset } = compileFilters(group);
      for (let pass = 0; pass < 2; pass++) {
        for (const doc of docs) {
          for (let k = 0; k < group.length; k++) {
            const expected = references[k].test(doc);
            const got = predicates[k](doc as any);
            if (got !== expected) throw new Error(`mismatch for filter ${JSON.stringify(group[k])} (of a group) on ${JSON.stringify(doc)}: expected ${expected}`);
            compared++;
          }
        }
        reset();
      }
    }
    expect(compared).toBe(1000 * 6 * 300 * 2);
  });
});

describe('sortPage', () => {
  test('quickselect page equals the same slice of a full sort, ties in scan order', () => {
    const docs = Array.from({ length: 1000 }, (_, i) => ({ _id: `d${i}`, k: i % 17, s: `s${i % 5}`, arr: [i % 7, (i * 3) % 11] }));
    for (const spec of [{ k: 1 }, { k: -1, s: 1 }, { s: -1 }, { arr: 1 }, { arr: -1 }] as Record<string, 1 | -1>[]) {
      const full = sortPage(docs as any, spec, 0, undefined).map((d) => d._id);
      for (const [skip, limit] of [[0, 10], [35, 20], [500, 50], [1, 999], [999, 1], [990, 50]]) {
        expect(sortPage(docs as any, spec, skip, limit).map((d) => d._id)).toEqual(full.slice(skip, skip + limit));
      }
    }
  });
});
