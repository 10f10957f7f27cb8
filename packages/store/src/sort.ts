/** Sorting, skip and limit for the embedded adapter (pure). */
import { Doc, isObjectId, valuesAtPath } from './values';

// Hot-path globals bound once: under a vm context (jest runs tests in one) every global lookup
// goes through an interceptor, which made the per-document loops up to 10x slower there.
const isArray = Array.isArray;
const DateClass = Date;

/** MongoDB's cross-type sort order (missing sorts as null). */
function typeRank(v: unknown): number {
  if (v === undefined || v === null) return 1;
  if (typeof v === 'number') return 2;
  if (typeof v === 'string') return 3;
  if (typeof v === 'boolean') return 8;
  if (v instanceof DateClass) return 9;
  if (v instanceof RegExp) return 11;
  if (isObjectId(v)) return 7;
  if (Buffer.isBuffer(v)) return 6;
  if (isArray(v)) return 5;
  return 4; // object
}

export function compareValues(a: unknown, b: unknown): number {
  if (typeof a === typeof b && (typeof a === 'string' || typeof a === 'number')) return (a as any) < (b as any) ? -1 : (a as any) > (b as any) ? 1 : 0;
  // times are stored as Dates: sorting by one (a list by registeredAt) skips the type ranking too
  if (a instanceof DateClass && b instanceof DateClass) return a.getTime() - b.getTime();
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra - rb;
  switch (ra) {
    case 1:
      return 0;
    case 2:
    case 3:
      return (a as any) < (b as any) ? -1 : (a as any) > (b as any) ? 1 : 0;
    case 8:
      return Number(a) - Number(b);
    case 9:
      return (a as Date).getTime() - (b as Date).getTime();
    case 7:
      return compareValues((a as any).toHexString(), (b as any).toHexString());
    case 5: {
      const x = a as unknown[];
      const y = b as unknown[];
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const c = compareValues(x[i], y[i]);
        if (c) return c;
      }
      return x.length - y.length;
    }
    case 4: {
      const ea = Object.entries(a as object);
      const eb = Object.entries(b as object);
      for (let i = 0; i < Math.min(ea.length, eb.length); i++) {
        const c = compareValues(ea[i][0], eb[i][0]) || compareValues(ea[i][1], eb[i][1]);
        if (c) return c;
      }
      return ea.length - eb.length;
    }
    default:
      return compareValues(String(a), String(b));
  }
}

/**
 * Extracts the value a document sorts by on one path: for arrays, the smallest element ascending
 * and the largest descending (MongoDB). Top-level scalar fields, the common case, skip the
 * generic path walk.
 */
function sortExtractor(path: string, dir: 1 | -1): (doc: Doc) => unknown {
  const generic = (doc: Doc): unknown => {
    const values = valuesAtPath(doc, path);
    let best = values[0];
    for (let i = 1; i < values.length; i++) {
      const c = compareValues(values[i], best);
      if (dir === 1 ? c < 0 : c > 0) best = values[i];
    }
    return best;
  };
  if (path.includes('.')) return generic;
  return (doc) => {
    const v = doc[path];
    return isArray(v) ? generic(doc) : v;
  };
}

/**
 * Sorts `docs` by `spec` and returns `[skip, skip + limit)`.
 *
 * A page of 50 out of 60,000 matches must not sort 60,000 documents, and a bounded heap degrades
 * to O(n log k) with an allocation per document in the most common case (newest first over
 * documents inserted oldest first). So: extract the first sort key of every document once, then
 * quickselect the best `skip + limit` (O(n) comparisons on average) and sort only those. Later
 * keys are extracted lazily, for ties only; remaining ties keep scan order, so pages are stable.
 */
export function sortPage(docs: Doc[], spec: Record<string, 1 | -1>, skip: number, limit: number | undefined): Doc[] {
  const paths = Object.keys(spec);
  const dirs = paths.map((p) => (spec[p] === -1 ? -1 : 1) as 1 | -1);
  const extract = paths.map((p, i) => sortExtractor(p, dirs[i]));
  const count = docs.length;
  const wanted = limit === undefined ? count : Math.min(count, skip + limit);
  if (wanted <= skip) return [];

  const first = new Array<unknown>(count);
  for (let i = 0; i < count; i++) first[i] = extract[0](docs[i]);
  // Later keys are only needed on ties of the first one: extracted lazily, remembered per document
  // (dense arrays with a "known" flag: sparse arrays and `in` checks cost a fifth of a deep sort).
  const later = paths.slice(1).map(() => ({ values: new Array<unknown>(count), known: new Uint8Array(count) }));
  const laterKey = (f: number, i: number): unknown => {
    const cache = later[f - 1];
    if (!cache.known[i]) {
      cache.values[i] = extract[f](docs[i]);
      cache.known[i] = 1;
    }
    return cache.values[i];
  };
  const dir0 = dirs[0];
  const cmp = (a: number, b: number): number => {
    const c = compareValues(first[a], first[b]);
    if (c) return dir0 === 1 ? c : -c;
    for (let f = 1; f < paths.length; f++) {
      const cf = compareValues(laterKey(f, a), laterKey(f, b));
      if (cf) return dirs[f] === 1 ? cf : -cf;
    }
    return a - b; // scan order
  };

  const order = new Int32Array(count);
  for (let i = 0; i < count; i++) order[i] = i;
  // Only the page itself is sorted: select the `wanted` smallest, then within them the `skip`
  // smallest, and sort what lies between (a deep page no longer sorts everything before it).
  if (wanted < count) select(order, wanted, cmp);
  if (skip > 0) select(order.subarray(0, wanted), skip, cmp);
  const window = Array.from(order.subarray(skip, wanted)).sort(cmp);
  return window.map((i) => docs[i]);
}

/** Rearranges `a` so that its first `k` entries are the k smallest under `cmp` (in any order). Hoare quickselect, median of three. */
function select(a: Int32Array, k: number, cmp: (x: number, y: number) => number): void {
  let lo = 0;
  let hi = a.length - 1;
  while (hi > lo) {
    const mid = (lo + hi) >> 1;
    // median of three as pivot guards against sorted input, the common case here
    if (cmp(a[mid], a[lo]) < 0) swap(a, mid, lo);
    if (cmp(a[hi], a[lo]) < 0) swap(a, hi, lo);
    if (cmp(a[hi], a[mid]) < 0) swap(a, hi, mid);
    const pivot = a[mid];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (cmp(a[i], pivot) < 0) i++;
      while (cmp(a[j], pivot) > 0) j--;
      if (i <= j) {
        swap(a, i, j);
        i++;
        j--;
      }
    }
    // [lo, j] <= pivot <= [i, hi]; keep narrowing to the side holding position k - 1
    if (k - 1 <= j) hi = j;
    else if (k - 1 >= i) lo = i;
    else return;
  }
}

function swap(a: Int32Array, i: number, j: number): void {
  const t = a[i];
  a[i] = a[j];
  a[j] = t;
}
