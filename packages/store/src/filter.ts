/**
 * Filter evaluation for the embedded adapter (pure).
 *
 * mingo is the reference for MongoDB query semantics, but its generic evaluator costs ~350 ns per
 * document even for `{ status: 'active' }`, which makes a 100,000-document page + count blow the
 * 50 ms budget. So the common clause shapes (equality, $in/$nin, $ne, range, $exists, regex on a
 * path that does not cross an array) are compiled into direct predicates, and everything else is
 * delegated to mingo. When a fast clause meets an array in the middle of its path, where MongoDB's
 * semantics get subtle, it answers "unknown" and the whole filter is evaluated by mingo for that
 * document. A property test (test/filter.test.ts) checks the fast path against mingo.
 */
import { Query } from 'mingo';
import { cloneDeep, Doc, isPlainObject, setPath } from './values';
import type { Filter } from './types';

// Hot-path globals bound once: under a vm context (jest runs tests in one) every global lookup
// goes through an interceptor, which made the per-document loops up to 10x slower there.
const isArray = Array.isArray;
const DateClass = Date;

export type Predicate = (doc: Doc) => boolean;

const FALSE = 0;
const TRUE = 1;
const UNKNOWN = 2;
type Tri = typeof FALSE | typeof TRUE | typeof UNKNOWN;
type Clause = (doc: Doc) => Tri;

const ARRAY_IN_PATH = Symbol('array-in-path');

type Scalar = string | number | boolean | Date;

function isScalar(v: unknown): v is Scalar {
  return typeof v === 'string' || (typeof v === 'number' && !Number.isNaN(v)) || typeof v === 'boolean' || v instanceof DateClass;
}

function scalarEquals(a: unknown, b: Scalar): boolean {
  if (b instanceof DateClass) return a instanceof DateClass && a.getTime() === b.getTime();
  return a === b;
}

/** Range operand kinds MongoDB compares within (it never compares across types for $gt and friends). */
function rangeKind(v: unknown): 'number' | 'string' | 'date' | undefined {
  if (typeof v === 'number' && !Number.isNaN(v)) return 'number';
  if (typeof v === 'string') return 'string';
  if (v instanceof DateClass) return 'date';
  return undefined;
}

function resolve(doc: Doc, parts: string[]): unknown {
  let v: any = doc;
  for (let i = 0; i < parts.length; i++) {
    if (v === null || typeof v !== 'object') return undefined;
    if (i > 0 && isArray(v)) return ARRAY_IN_PATH;
    v = v[parts[i]];
  }
  return v;
}

/** Leaf test on a value or, for a leaf array, on any of its elements (MongoDB's implicit array matching). */
function anyOrSelf(v: unknown, test: (x: unknown) => boolean): boolean {
  if (test(v)) return true;
  if (isArray(v)) for (const el of v) if (test(el)) return true;
  return false;
}

/** `{ field: null }` matches null, a missing field, or an array holding null (the outbox's "not published yet"). */
function matchesNull(v: unknown): boolean {
  return v === null || v === undefined || (isArray(v) && v.includes(null));
}

function fastRegex(re: unknown): RegExp | undefined {
  if (!(re instanceof RegExp) || re.global || re.sticky) return undefined; // stateful lastIndex
  return re;
}

/** Compiles one operator of a field condition to a leaf test, or undefined when it is not on the fast path. */
function compileOperator(op: string, operand: unknown, siblings: Record<string, unknown>): ((v: unknown) => boolean) | undefined {
  switch (op) {
    case '$eq':
      if (operand === null) return matchesNull;
      if (!isScalar(operand)) return undefined;
      return (v) => anyOrSelf(v, (x) => scalarEquals(x, operand));
    case '$ne':
      if (operand === null) return (v) => !matchesNull(v);
      if (!isScalar(operand)) return undefined;
      return (v) => !anyOrSelf(v, (x) => scalarEquals(x, operand));
    case '$in':
    case '$nin': {
      if (!isArray(operand) || !operand.every(isScalar)) return undefined;
      const hasDate = operand.some((x) => x instanceof DateClass);
      const set = hasDate ? undefined : new Set<unknown>(operand);
      const member = set ? (x: unknown) => set.has(x) : (x: unknown) => operand.some((o) => scalarEquals(x, o));
      return op === '$in' ? (v) => anyOrSelf(v, member) : (v) => !anyOrSelf(v, member);
    }
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte': {
      const kind = rangeKind(operand);
      if (!kind) return undefined;
      const bound = kind === 'date' ? (operand as Date).getTime() : (operand as number | string);
      const cmp =
        op === '$gt' ? (x: any) => x > bound : op === '$gte' ? (x: any) => x >= bound : op === '$lt' ? (x: any) => x < bound : (x: any) => x <= bound;
      const test =
        kind === 'date'
          ? (x: unknown) => x instanceof DateClass && cmp(x.getTime())
          : kind === 'number'
            ? (x: unknown) => typeof x === 'number' && cmp(x)
            : (x: unknown) => typeof x === 'string' && cmp(x);
      return (v) => anyOrSelf(v, test);
    }
    case '$exists':
      if (typeof operand !== 'boolean') return undefined;
      return operand ? (v) => v !== undefined : (v) => v === undefined;
    case '$regex': {
      let re: RegExp | undefined;
      const options = siblings.$options;
      if (typeof operand === 'string') {
        if (options !== undefined && typeof options !== 'string') return undefined;
        if (typeof options === 'string' && !/^[imsu]*$/.test(options)) return undefined;
        re = new RegExp(operand, options as string | undefined);
      } else if (options === undefined) re = fastRegex(operand);
      if (!re) return undefined;
      const r = re;
      return (v) => anyOrSelf(v, (x) => typeof x === 'string' && r.test(x));
    }
    case '$options':
      return siblings.$regex !== undefined ? () => true : undefined; // consumed by $regex
    default:
      return undefined;
  }
}

/** Fast clause for `path: condition`, or undefined when it must go to mingo. */
function compileField(path: string, cond: unknown): Clause | undefined {
  if (path.startsWith('$')) return undefined;
  const parts = path.split('.');
  let leaf: ((v: unknown) => boolean) | undefined;
  if (cond === null) leaf = compileOperator('$eq', null, {});
  else if (isScalar(cond)) leaf = compileOperator('$eq', cond, {});
  else if (cond instanceof RegExp) leaf = compileOperator('$regex', cond, {});
  else if (isPlainObject(cond)) {
    const keys = Object.keys(cond);
    if (keys.length === 0 || !keys.every((k) => k.startsWith('$'))) return undefined; // sub-document equality
    const tests: ((v: unknown) => boolean)[] = [];
    for (const k of keys) {
      const t = compileOperator(k, cond[k], cond);
      if (!t) return undefined;
      tests.push(t);
    }
    leaf = tests.length === 1 ? tests[0] : (v) => tests.every((t) => t(v));
  }
  if (!leaf) return undefined;
  const test = leaf;
  if (parts.length === 1) {
    const key = parts[0];
    return (doc) => (test(doc[key]) ? TRUE : FALSE);
  }
  return (doc) => {
    const v = resolve(doc, parts);
    if (v === ARRAY_IN_PATH) return UNKNOWN;
    return test(v) ? TRUE : FALSE;
  };
}

function splitClauses(filter: Filter, fast: Clause[], slow: Filter[]): void {
  for (const key of Object.keys(filter)) {
    const cond = filter[key];
    if (key === '$and' && isArray(cond) && cond.length > 0 && cond.every(isPlainObject)) {
      for (const sub of cond) splitClauses(sub as Filter, fast, slow);
      continue;
    }
    const clause = key === '$or' || key === '$nor' ? compileLogical(key, cond) : compileField(key, cond);
    if (clause) fast.push(clause);
    else slow.push({ [key]: cond });
  }
}

/** A whole sub-filter as one fast clause, or undefined if any part of it needs mingo. */
function compileAllFast(filter: unknown): Clause | undefined {
  if (!isPlainObject(filter)) return undefined;
  const fast: Clause[] = [];
  const slow: Filter[] = [];
  splitClauses(filter, fast, slow);
  if (slow.length > 0) return undefined;
  return (doc) => {
    let result: Tri = TRUE;
    for (let i = 0; i < fast.length; i++) {
      const r = fast[i](doc);
      if (r === FALSE) return FALSE;
      if (r === UNKNOWN) result = UNKNOWN;
    }
    return result;
  };
}

/** `$or` / `$nor` whose branches are all on the fast path (the subscriber search: email or first-name prefix). */
function compileLogical(op: '$or' | '$nor', cond: unknown): Clause | undefined {
  if (!isArray(cond) || cond.length === 0) return undefined;
  const branches = cond.map(compileAllFast);
  if (branches.some((b) => b === undefined)) return undefined;
  const all = branches as Clause[];
  const any: Clause = (doc) => {
    let result: Tri = FALSE;
    for (let i = 0; i < all.length; i++) {
      const r = all[i](doc);
      if (r === TRUE) return TRUE;
      if (r === UNKNOWN) result = UNKNOWN;
    }
    return result;
  };
  if (op === '$or') return any;
  return (doc) => {
    const r = any(doc);
    return r === UNKNOWN ? UNKNOWN : r === TRUE ? FALSE : TRUE;
  };
}

/** Compiles a (cast) filter into a predicate with MongoDB semantics. */
export function compileFilter(filter: Filter): Predicate {
  const fast: Clause[] = [];
  const slow: Filter[] = [];
  splitClauses(filter, fast, slow);
  const residual = slow.length === 0 ? undefined : new Query(slow.length === 1 ? slow[0] : { $and: slow });
  if (fast.length === 0) return residual ? (doc) => residual.test(doc) : () => true;
  let full: Query | undefined;
  const mingoAll = (doc: Doc) => (full ??= new Query(filter)).test(doc);
  return (doc) => {
    for (let i = 0; i < fast.length; i++) {
      const r = fast[i](doc);
      if (r === FALSE) return false;
      if (r === UNKNOWN) return mingoAll(doc);
    }
    return residual ? residual.test(doc) : true;
  };
}

/** The scalar a top-level condition pins a field to (`field: v` or `field: { $eq: v }`), if any. */
export function equalityScalar(cond: unknown): Scalar | undefined {
  if (isScalar(cond)) return cond;
  if (isPlainObject(cond)) {
    const keys = Object.keys(cond);
    if (keys.length === 1 && keys[0] === '$eq' && isScalar(cond.$eq)) return cond.$eq;
  }
  return undefined;
}

/** The strings a top-level condition restricts a field to (`v`, `{ $eq: v }`, `{ $in: [...] }`), if it does. */
export function stringChoices(cond: unknown): string[] | undefined {
  if (typeof cond === 'string') return [cond];
  if (isPlainObject(cond)) {
    const keys = Object.keys(cond);
    if (keys.length !== 1) return undefined;
    if (keys[0] === '$eq' && typeof cond.$eq === 'string') return [cond.$eq];
    if (keys[0] === '$in' && isArray(cond.$in) && cond.$in.every((x) => typeof x === 'string')) return cond.$in as string[];
  }
  return undefined;
}

/**
 * The document an upsert starts from when nothing matched: the filter's equality conditions
 * (top level and inside $and), as MongoDB does.
 */
export function upsertSeed(filter: Filter): Record<string, any> {
  const seed: Record<string, any> = {};
  addEqualities(filter, seed);
  return seed;
}

function addEqualities(filter: Filter, seed: Record<string, any>): void {
  for (const [key, cond] of Object.entries(filter)) {
    if (key === '$and' && isArray(cond)) {
      for (const sub of cond) if (isPlainObject(sub)) addEqualities(sub, seed);
      continue;
    }
    if (key.startsWith('$') || cond instanceof RegExp) continue;
    if (isPlainObject(cond)) {
      const keys = Object.keys(cond);
      if (keys.some((k) => k.startsWith('$'))) {
        if ('$eq' in cond) setPath(seed, key, cloneDeep(cond.$eq));
        continue;
      }
    }
    setPath(seed, key, cloneDeep(cond));
  }
}
