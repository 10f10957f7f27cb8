/**
 * Filter evaluation for the embedded adapter (pure).
 *
 * mingo is the reference for MongoDB query semantics, but its generic evaluator costs ~350 ns per
 * document even for `{ status: 'active' }`, which makes a 100,000-document page + count blow the
 * 50 ms budget. So the common clause shapes (equality, $in/$nin, $ne, range, $exists, regex on a
 * path that does not cross an array, $and/$or/$nor of those, and $elemMatch with a document query of
 * those, nested: the segment compiler's purchase conditions) are compiled into generated code (see
 * CodeGen), and everything else is
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

const ARRAY_IN_PATH = Symbol('array-in-path');

type Scalar = string | number | boolean | Date;

function isScalar(v: unknown): v is Scalar {
  return typeof v === 'string' || (typeof v === 'number' && !Number.isNaN(v)) || typeof v === 'boolean' || v instanceof DateClass;
}

/** Range operand kinds MongoDB compares within (it never compares across types for $gt and friends). */
function rangeKind(v: unknown): 'number' | 'string' | 'date' | undefined {
  if (typeof v === 'number' && !Number.isNaN(v)) return 'number';
  if (typeof v === 'string') return 'string';
  if (v instanceof DateClass) return 'date';
  return undefined;
}

function fastRegex(re: unknown): RegExp | undefined {
  if (!(re instanceof RegExp) || re.global || re.sticky) return undefined; // stateful lastIndex
  return re;
}

/**
 * The fast path is generated code: each fast (sub-)filter becomes one small JavaScript function
 * (built once per query with `new Function`), the leaf tests inlined, constants (Sets, bounds,
 * RegExps) bound in its closure. Generic closures per clause cost a megamorphic call per clause
 * and per array element; generated functions have one callee per call site, which V8 inlines, so a
 * segment filter over a million contacts and their orders runs close to a hand-written loop.
 *
 * Every generated function returns a Tri: FALSE, TRUE or UNKNOWN (the fast path cannot decide: an
 * array along a dotted path, an odd element inside $elemMatch), and UNKNOWN sends the whole document
 * to mingo. Which shapes are fast, and what they answer, is unchanged: the property test
 * (test/filter.test.ts) checks every shape against mingo.
 */
/** One fast clause of an AND: statements, and a rough cost (property reads) to order clauses by. */
interface Stmt {
  code: string;
  cost: number;
}

class CodeGen {
  /** Constants the generated code reads (as c0, c1, ...). */
  readonly consts: unknown[] = [];
  /** Function declarations, in dependency order. */
  readonly decls: string[] = [];
  private n = 0;
  /** Functions already generated, by what they compute (see shapeKey): a sub-filter met twice is one function. */
  private readonly cache = new Map<string, { fn: string; cost: number } | null>();
  /** Memoized functions (their last document and result), cleared by the `reset` of buildAll. */
  private readonly memos: string[] = [];
  /** > 0 while generating the query of an $elemMatch: those functions see array elements, a new one each call, and are not memoized. */
  private nested = 0;

  /**
   * @param memo generated functions of whole sub-filters ($elemMatch, AND, $or/$nor) remember their
   *   result for the last document they saw: when several filters of one shared scan are compiled
   *   together (compileFilters), a sub-filter they have in common (a segment preview's TRUE filter
   *   inside its UNKNOWN and reachable filters, its purchase $elemMatch inside the FALSE filter) is
   *   tested once per document, not once per filter.
   */
  constructor(private readonly memo = false) {}

  /** Declares `function fn(d)` with `body`; memoized per document in memo mode. */
  private declare(fn: string, body: string): void {
    if (!this.memo || this.nested > 0) {
      this.decls.push(`function ${fn}(d) {\n${body}\n}`);
      return;
    }
    // the result is stored only once computed: a throwing test leaves no stale entry behind
    this.memos.push(fn);
    this.decls.push(
      `let m_${fn} = null, r_${fn} = 0;\nfunction ${fn}(d) {\nif (d === m_${fn}) return r_${fn};\nconst r = ${fn}_(d);\nm_${fn} = d;\nr_${fn} = r;\nreturn r;\n}\n` +
        `function ${fn}_(d) {\n${body}\n}`,
    );
  }

  /** The function generated for `key` (or, with null, that it is not on the fast path), else generates it with `make`. */
  private cached(key: string | undefined, make: () => { fn: string; cost: number } | undefined): { fn: string; cost: number } | undefined {
    if (key === undefined) return make();
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit ?? undefined;
    const made = make();
    this.cache.set(key, made ?? null);
    return made;
  }

  constant(v: unknown): string {
    this.consts.push(v);
    return `c${this.consts.length - 1}`;
  }

  name(prefix: string): string {
    return `${prefix}${this.n++}`;
  }

  /** `v` at a dotted path; a multi-part path gets its own resolver (ARRAY_IN_PATH when an array is crossed). */
  valueAt(parts: string[], doc: string): string {
    if (parts.length === 1) return `${doc}[${JSON.stringify(parts[0])}]`;
    const fn = this.name('p');
    let body = `let v = d[${JSON.stringify(parts[0])}];\n`;
    for (let i = 1; i < parts.length; i++) {
      body += `if (v === null || typeof v !== 'object') return undefined;\nif (isArray(v)) return AIP;\nv = v[${JSON.stringify(parts[i])}];\n`;
    }
    this.decls.push(`function ${fn}(d) {\n${body}return v;\n}`);
    return `${fn}(${doc})`;
  }

  /** A boolean function of a value with MongoDB's implicit array matching (the value, or any element of a leaf array). */
  anyOrSelf(cond: (x: string) => string): string {
    const fn = this.name('l');
    this.decls.push(`function ${fn}(v) {\nif (${cond('v')}) return true;\nif (isArray(v)) for (let i = 0; i < v.length; i++) { const x = v[i]; if (${cond('x')}) return true; }\nreturn false;\n}`);
    return fn;
  }

  /** Source of a boolean test of `v` for one operator, or undefined when it is not on the fast path. */
  operator(op: string, operand: unknown, siblings: Record<string, unknown>): ((v: string) => string) | undefined {
    switch (op) {
      case '$eq':
      case '$ne': {
        let test: (v: string) => string;
        if (operand === null) test = (v) => `(${v} === null || ${v} === undefined || (isArray(${v}) && ${v}.includes(null)))`;
        else if (!isScalar(operand)) return undefined;
        else {
          const fn = this.anyOrSelf(this.equalsCond(operand));
          test = (v) => `${fn}(${v})`;
        }
        return op === '$eq' ? test : (v) => `!${test(v)}`;
      }
      case '$in':
      case '$nin': {
        if (!isArray(operand) || !operand.every(isScalar)) return undefined;
        let fn: string;
        if (operand.some((x) => x instanceof DateClass)) {
          const list = this.constant(operand);
          fn = this.anyOrSelf((x) => `${list}.some((o) => o instanceof DateClass ? ${x} instanceof DateClass && ${x}.getTime() === o.getTime() : ${x} === o)`);
        } else if (operand.length <= 4) {
          // a few values: comparisons beat hashing the (often long, not internalized) strings
          const names = operand.map((o) => this.constant(o));
          fn = names.length === 0 ? this.anyOrSelf(() => 'false') : this.anyOrSelf((x) => `(${names.map((c) => `${x} === ${c}`).join(' || ')})`);
        } else {
          const set = this.constant(new Set<unknown>(operand));
          fn = this.anyOrSelf((x) => `${set}.has(${x})`);
        }
        return op === '$in' ? (v) => `${fn}(${v})` : (v) => `!${fn}(${v})`;
      }
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte': {
        const kind = rangeKind(operand);
        if (!kind) return undefined;
        const sign = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' }[op];
        const bound = this.constant(kind === 'date' ? (operand as Date).getTime() : operand);
        const fn = this.anyOrSelf((x) =>
          kind === 'date' ? `(${x} instanceof DateClass && ${x}.getTime() ${sign} ${bound})` : `(typeof ${x} === '${kind}' && ${x} ${sign} ${bound})`,
        );
        return (v) => `${fn}(${v})`;
      }
      case '$exists':
        if (typeof operand !== 'boolean') return undefined;
        return operand ? (v) => `(${v} !== undefined)` : (v) => `(${v} === undefined)`;
      case '$regex': {
        let re: RegExp | undefined;
        const options = siblings.$options;
        if (typeof operand === 'string') {
          if (options !== undefined && typeof options !== 'string') return undefined;
          if (typeof options === 'string' && !/^[imsu]*$/.test(options)) return undefined;
          re = new RegExp(operand, options as string | undefined);
        } else if (options === undefined) re = fastRegex(operand);
        if (!re) return undefined;
        const r = this.constant(re);
        const fn = this.anyOrSelf((x) => `(typeof ${x} === 'string' && ${r}.test(${x}))`);
        return (v) => `${fn}(${v})`;
      }
      case '$options':
        return siblings.$regex !== undefined ? () => 'true' : undefined; // consumed by $regex
      default:
        return undefined;
    }
  }

  private equalsCond(operand: Scalar): (x: string) => string {
    if (operand instanceof DateClass) {
      const t = this.constant(operand.getTime());
      return (x) => `(${x} instanceof DateClass && ${x}.getTime() === ${t})`;
    }
    const c = this.constant(operand);
    return (x) => `${x} === ${c}`;
  }

  /** Statements deciding one `path: condition` clause of an AND (`return 0` on FALSE, `u = 1` on UNKNOWN), or undefined. */
  field(path: string, cond: unknown): Stmt | undefined {
    if (path.startsWith('$')) return undefined;
    const parts = path.split('.');
    if (isPlainObject(cond) && '$elemMatch' in cond) {
      if (Object.keys(cond).length !== 1) return undefined;
      const em = this.elemMatch(parts, cond.$elemMatch);
      return em && { code: `r = ${em.fn}(d); if (r === 0) return 0; if (r === 2) u = 1;`, cost: em.cost };
    }
    let tests: ((v: string) => string)[] | undefined;
    if (cond === null) tests = [this.operator('$eq', null, {})!];
    else if (isScalar(cond)) tests = [this.operator('$eq', cond, {})!];
    else if (cond instanceof RegExp) {
      const t = this.operator('$regex', cond, {});
      tests = t && [t];
    } else if (isPlainObject(cond)) {
      const keys = Object.keys(cond);
      if (keys.length === 0 || !keys.every((k) => k.startsWith('$'))) return undefined; // sub-document equality
      tests = [];
      for (const k of keys) {
        const t = this.operator(k, cond[k], cond);
        if (!t) return undefined;
        tests.push(t);
      }
    }
    if (!tests) return undefined;
    const all = (v: string) => tests!.map((t) => t(v)).join(' && ');
    const value = this.valueAt(parts, 'd');
    const cost = parts.length + 0.1 * tests.length;
    if (parts.length === 1) return { code: `v = ${value}; if (!(${all('v')})) return 0;`, cost };
    return { code: `v = ${value}; if (v === AIP) u = 1; else if (!(${all('v')})) return 0;`, cost };
  }

  /** `path: { $elemMatch: { document query } }` (see the shapes in the comment of compileFilter's file), or undefined. */
  private elemMatch(parts: string[], query: unknown): { fn: string; cost: number } | undefined {
    const key = shapeKey(query);
    return this.cached(key === undefined ? undefined : `em:${JSON.stringify(parts)}:${key}`, () => this.elemMatchFunction(parts, query));
  }

  private elemMatchFunction(parts: string[], query: unknown): { fn: string; cost: number } | undefined {
    if (!isPlainObject(query)) return undefined;
    const keys = Object.keys(query);
    if (keys.length === 0 || keys.some((k) => k.startsWith('$') && k !== '$and' && k !== '$or' && k !== '$nor')) return undefined;
    this.nested++;
    let compiled: { fn: string; cost: number } | undefined;
    try {
      compiled = this.and(query);
    } finally {
      this.nested--;
    }
    if (!compiled) return undefined;
    const sub = compiled.fn;
    const fn = this.name('e');
    const value = this.valueAt(parts, 'd');
    this.declare(
      fn,
      `const v = ${value};\nif (v === undefined || v === null) return 0;\nif (!isArray(v)) return 2;\nlet u = 0;\n` +
        `for (let i = 0; i < v.length; i++) { const el = v[i]; if (!isPlainObject(el)) return 2; const r = ${sub}(el); if (r === 1) return 1; if (r === 2) u = 1; }\n` +
        `return u ? 2 : 0;`,
    );
    // an array of a few sub-documents, each tested
    return { fn, cost: parts.length + 3 * (1 + compiled.cost) };
  }

  /** A whole filter as one AND function, or undefined if any part of it needs mingo. */
  and(filter: Filter): { fn: string; cost: number } | undefined {
    const key = shapeKey(filter);
    return this.cached(key === undefined ? undefined : `and:${key}`, () => this.andOf(filter));
  }

  private andOf(filter: Filter): { fn: string; cost: number } | undefined {
    const stmts: Stmt[] = [];
    const slow: Filter[] = [];
    this.split(filter, stmts, slow);
    if (slow.length > 0) return undefined;
    return this.andFunction(stmts);
  }

  /**
   * The AND of statements, cheapest first: the result does not depend on the order (a FALSE anywhere
   * is FALSE, an UNKNOWN goes to mingo), so the cheap tests get the chance to end the document early.
   */
  andFunction(stmts: Stmt[]): { fn: string; cost: number } {
    const fn = this.name('f');
    const ordered = [...stmts].sort((a, b) => a.cost - b.cost);
    this.declare(fn, `let u = 0, v, r;\n${ordered.map((s) => s.code).join('\n')}\nreturn u ? 2 : 1;`);
    return { fn, cost: stmts.reduce((sum, s) => sum + s.cost, 0) };
  }

  /** Splits a filter's clauses (flattening $and) into fast statements and slow remainders. */
  split(filter: Filter, stmts: Stmt[], slow: Filter[]): void {
    for (const key of Object.keys(filter)) {
      const cond = filter[key];
      if (key === '$and' && isArray(cond) && cond.length > 0 && cond.every(isPlainObject)) {
        for (const sub of cond) this.split(sub as Filter, stmts, slow);
        continue;
      }
      const stmt = key === '$or' || key === '$nor' ? this.logical(key, cond) : this.field(key, cond);
      if (stmt) stmts.push(stmt);
      else slow.push({ [key]: cond });
    }
  }

  /** `$or` / `$nor` whose branches are all on the fast path, as AND statements (branches cheapest first, as in AND). */
  private logical(op: '$or' | '$nor', cond: unknown): Stmt | undefined {
    if (!isArray(cond) || cond.length === 0 || !cond.every(isPlainObject)) return undefined;
    // the OR of the branches, shared by a $or and a $nor of the same branches
    const key = shapeKey(cond);
    const any = this.cached(key === undefined ? undefined : `or:${key}`, () => {
      const branches: { fn: string; cost: number }[] = [];
      for (const b of cond) {
        const compiled = this.and(b as Filter);
        if (!compiled) return undefined;
        branches.push(compiled);
      }
      branches.sort((a, b) => a.cost - b.cost);
      const fn = this.name('o');
      const calls = branches.map((b) => `r = ${b.fn}(d); if (r === 1) return 1; if (r === 2) u = 1;`).join('\n');
      this.declare(fn, `let u = 0, r;\n${calls}\nreturn u ? 2 : 0;`);
      return { fn, cost: branches.reduce((sum, b) => sum + b.cost, 0) };
    });
    if (!any) return undefined;
    const { fn, cost } = any;
    // $or: TRUE/FALSE as is; $nor: swapped
    const code = op === '$or' ? `r = ${fn}(d); if (r === 0) return 0; if (r === 2) u = 1;` : `r = ${fn}(d); if (r === 1) return 0; if (r === 2) u = 1;`;
    return { code, cost };
  }

  /** Builds the generated functions and returns `entry`. */
  build(entry: string): (doc: Doc) => Tri {
    return this.buildAll([entry]).fns[0];
  }

  /** Builds the generated functions once and returns the `entries`, with `reset` forgetting every memoized result. */
  buildAll(entries: string[]): { fns: ((doc: Doc) => Tri)[]; reset: () => void } {
    const names = this.consts.map((_, i) => `c${i}`);
    const reset = `function reset() {\n${this.memos.map((m) => `m_${m} = null;`).join('\n')}\n}`;
    const src = `${names.length ? `const [${names.join(', ')}] = consts;\n` : ''}${this.decls.join('\n')}\n${reset}\nreturn { fns: [${entries.join(', ')}], reset };`;
    let factory = factories.get(src);
    if (!factory) {
      if (factories.size >= MAX_FACTORIES) factories.clear();
      factories.set(src, (factory = new Function('consts', 'isArray', 'DateClass', 'AIP', 'isPlainObject', src) as Factory));
    }
    return factory(this.consts, isArray, DateClass, ARRAY_IN_PATH, isPlainObject);
  }
}

type Factory = (consts: unknown[], ...globals: unknown[]) => { fns: ((doc: Doc) => Tri)[]; reset: () => void };

/**
 * Generated modules by source text. The source names a filter's values only as constants (c0,
 * c1...), so every query of one shape (`{ _id, accountId, 'sending.token' }`) has the same source:
 * it is parsed once, and its functions share V8's compiled code and type feedback instead of being
 * parsed and optimized anew per query. Each call of a factory still gets its own closure (its
 * constants and memos). Bounded: cleared when full.
 */
const factories = new Map<string, Factory>();
const MAX_FACTORIES = 2000;

/** Compiles a (cast) filter into a predicate with MongoDB semantics. */
export function compileFilter(filter: Filter): Predicate {
  const gen = new CodeGen();
  const planned = planFilter(gen, filter);
  return predicateOf(planned, planned.entry === undefined ? undefined : gen.build(planned.entry));
}

/**
 * Compiles several (cast) filters tested against the same documents one after another (a shared
 * scan) into one generated module: sub-filters they have in common become one function that
 * remembers its result for the last document, so each is tested once per document. Each predicate
 * answers exactly as compileFilter's would. Call `reset` after the pass (the memos hold a document).
 */
export function compileFilters(filters: Filter[]): { predicates: Predicate[]; reset: () => void } {
  const gen = new CodeGen(true);
  const planned = filters.map((f) => planFilter(gen, f));
  const { fns, reset } = gen.buildAll(planned.filter((p) => p.entry !== undefined).map((p) => p.entry!));
  let k = 0;
  return { predicates: planned.map((p) => predicateOf(p, p.entry === undefined ? undefined : fns[k++])), reset };
}

interface PlannedFilter {
  filter: Filter;
  /** The generated AND of the fast clauses, if any. */
  entry?: string;
  /** The clauses only mingo evaluates, if any. */
  residual?: Query;
}

function planFilter(gen: CodeGen, filter: Filter): PlannedFilter {
  const stmts: Stmt[] = [];
  const slow: Filter[] = [];
  gen.split(filter, stmts, slow);
  const residual = slow.length === 0 ? undefined : new Query(slow.length === 1 ? slow[0] : { $and: slow });
  return { filter, residual, entry: stmts.length === 0 ? undefined : gen.andFunction(stmts).fn };
}

function predicateOf({ filter, residual }: PlannedFilter, fast: ((doc: Doc) => Tri) | undefined): Predicate {
  if (!fast) return residual ? (doc) => residual.test(doc) : () => true;
  let full: Query | undefined;
  const mingoAll = (doc: Doc) => (full ??= new Query(filter)).test(doc);
  if (!residual) {
    return (doc) => {
      const r = fast(doc);
      return r === TRUE ? true : r === FALSE ? false : mingoAll(doc);
    };
  }
  return (doc) => {
    const r = fast(doc);
    return r === FALSE ? false : r === UNKNOWN ? mingoAll(doc) : residual.test(doc);
  };
}

/**
 * A key naming exactly what a (sub-)filter value asks (CodeGen's cache): equal keys, equal
 * generated code. undefined for values it cannot name exactly (ObjectIds, Buffers, class instances):
 * those are simply not shared.
 */
function shapeKey(v: unknown): string | undefined {
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      return Object.is(v, -0) ? 'n-0' : `n${v}`; // NaN and the infinities too, unlike JSON
    case 'boolean':
      return v ? 'true' : 'false';
    case 'undefined':
      return 'undefined';
    case 'object': {
      if (v === null) return 'null';
      if (v instanceof DateClass) return `D${v.getTime()}`;
      if (v instanceof RegExp) return `R${JSON.stringify(v.source)}/${v.flags}/${v.lastIndex}`;
      if (isArray(v)) {
        const parts: string[] = [];
        for (const x of v) {
          const k = shapeKey(x);
          if (k === undefined) return undefined;
          parts.push(k);
        }
        return `[${parts.join(',')}]`;
      }
      if (!isPlainObject(v)) return undefined;
      const parts: string[] = [];
      for (const key of Object.keys(v)) {
        const k = shapeKey(v[key]);
        if (k === undefined) return undefined;
        parts.push(`${JSON.stringify(key)}:${k}`);
      }
      return `{${parts.join(',')}}`;
    }
    default:
      return undefined;
  }
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
