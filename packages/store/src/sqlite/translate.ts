/**
 * Translating MongoDB filters and sorts into SQL over the stored JSON (pure).
 *
 * A filter becomes `{ sql, exact }`: `sql` selects a superset of the matching documents (undefined:
 * no restriction), and `exact` says it selects exactly them, so nothing needs checking in
 * JavaScript. Only clauses on paths the schema types (paths.ts) with operands of that type are
 * translated; everything else (regexes, $elemMatch, $size, $type, Mixed paths, an operand of another
 * type than the path's...) is left out of the SQL and the whole filter is then evaluated by the
 * JavaScript filter (filter.ts) on the rows SQL returns. The translations rely on what the store
 * guarantees: every write is cast through the schema, so a typed path holds its type or null.
 * (Times stored as strings by an older build before their migration are the one known exception:
 * their Date key is null, so they never match a Date comparison, as on MongoDB, and sort as null.)
 *
 * Every generated condition is two-valued once NULL is read as false, which is what `$nor`'s
 * `CASE WHEN ... THEN 0 ELSE 1 END` relies on.
 */
import mongoose from 'mongoose';
import type { Filter } from '../types';
import { isPlainObject } from '../values';
import type { KeyColumns } from './keys';
import { documentArrayOf, isSubdocumentPath, keyExpr, NULL_KEY, pathKind, PathKind, rawExpr, ScalarKind, jsonPath, sqlString } from './paths';

export interface SqlCondition {
  /** undefined: every row. */
  sql?: string;
  exact: boolean;
}

/** Collects bound values (`?`), or inlines them as literals (index definitions take no parameters). */
export class Params {
  readonly values: (string | number)[] = [];
  constructor(readonly inline = false) {}

  bind(v: string | number): string {
    if (!this.inline) {
      this.values.push(v);
      return '?';
    }
    return typeof v === 'string' ? sqlString(v) : String(v);
  }
}

const NONE: SqlCondition = { exact: false };
const ALL: SqlCondition = { exact: true };

/** The SQL value of an operand for a path kind, or undefined when the operand is of another type. */
export function sqlValue(kind: ScalarKind | 'id', v: unknown): string | number | undefined {
  switch (kind) {
    case 'id':
    case 'string':
      return typeof v === 'string' ? v : undefined;
    case 'number':
      return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
    case 'boolean':
      return typeof v === 'boolean' ? (v ? 1 : 0) : undefined;
    case 'date':
      return v instanceof Date && !Number.isNaN(v.getTime()) ? v.getTime() : undefined;
  }
}

export class FilterTranslator {
  private readonly kinds = new Map<string, PathKind | null>();
  private readonly elements = new Map<string, FilterTranslator>();

  /**
   * @param keys the table's key columns (keys.ts), which filters on the table's rows read in place
   *   of the paths' expressions
   * @param base the JSON the paths are read from: a row's `doc`, or inside a document array the
   *   `value` of a json_each row (`e1.value`, numbered by depth).
   */
  constructor(
    private readonly schema: mongoose.Schema,
    private readonly keys?: KeyColumns,
    private readonly base = 'doc',
    private readonly depth = 0,
  ) {}

  /** The comparable key of a scalar path (its key column on the table's rows). */
  keyOf(path: string, kind: ScalarKind | 'id'): string {
    return this.keys ? this.keys.key(path, kind) : keyExpr(path, kind, this.base);
  }

  /** Whether a path is present (its presence column on the table's rows). */
  private exists(path: string, present: boolean): SqlCondition {
    if (this.keys) return { sql: present ? this.keys.has(path) : `NOT ${this.keys.has(path)}`, exact: true };
    return { sql: `json_type(${this.base}, ${sqlString(jsonPath(path))}) IS ${present ? 'NOT ' : ''}NULL`, exact: true };
  }

  kindOf(path: string): PathKind | undefined {
    if (path === '_id' && this.depth > 0) return undefined; // an element's _id is an ObjectId, not the row's
    let kind = this.kinds.get(path);
    if (kind === undefined) this.kinds.set(path, (kind = pathKind(this.schema, path) ?? null));
    return kind ?? undefined;
  }

  translate(filter: Filter, params: Params): SqlCondition {
    if (!isPlainObject(filter)) return NONE;
    return and(Object.keys(filter).map((key) => this.clause(key, filter[key], params)));
  }

  private clause(key: string, cond: unknown, params: Params): SqlCondition {
    if (key === '$and' || key === '$or' || key === '$nor') {
      if (!Array.isArray(cond) || cond.length === 0 || !cond.every(isPlainObject)) return NONE;
      const mark = params.values.length;
      const parts = cond.map((sub) => this.translate(sub as Filter, params));
      if (key === '$and') return and(parts);
      const discard = (result: SqlCondition) => {
        params.values.length = mark; // the branches' bound values go with their SQL
        return result;
      };
      // a branch every row matches: the $or matches every row, the $nor none
      if (parts.some((p) => p.sql === undefined && p.exact)) return discard(key === '$or' ? ALL : { sql: '0', exact: true });
      if (parts.some((p) => p.sql === undefined)) return discard(NONE); // a branch SQL cannot restrict
      const or = `(${parts.map((p) => p.sql).join(' OR ')})`;
      const exact = parts.every((p) => p.exact);
      if (key === '$or') return { sql: or, exact };
      // a CASE, not NOT coalesce(...): SQLite computes every branch of an OR that is a function's
      // argument, but tests a CASE's condition branch by branch, as a WHERE (the NULL as false alike)
      return exact ? { sql: `CASE WHEN ${or} THEN 0 ELSE 1 END`, exact } : discard(NONE);
    }
    if (key.startsWith('$')) return NONE;
    const kind = this.kindOf(key);
    if (kind === undefined) {
      const inArray = this.inDocumentArray(key, cond, params);
      if (inArray) return inArray;
      const ops = isPlainObject(cond) ? cond : {};
      const only = Object.keys(ops).length === 1 ? Object.keys(ops)[0] : undefined;
      // $exists on a top-level field is exact whatever its type: a top-level field is never inside an array
      if (!key.includes('.') && only === '$exists' && typeof ops.$exists === 'boolean') return this.exists(key, ops.$exists);
      // a single subdocument (a Map's value) is an object or nothing
      if (only === '$type' && (ops.$type === 'object' || ops.$type === 3) && isSubdocumentPath(this.schema, key)) return { sql: `json_type(${this.base}, ${sqlString(jsonPath(key))}) = 'object'`, exact: true };
      return NONE;
    }
    if (cond instanceof RegExp) return cond.flags === '' ? this.operator(key, kind, '$regex', cond.source, params) : NONE;
    if (isPlainObject(cond)) {
      const ops = Object.keys(cond);
      if (ops.length === 0 || !ops.every((op) => op.startsWith('$'))) return NONE; // sub-document equality
      // a case-insensitive (or multiline...) match is no subset of the case-sensitive SQL one
      if ('$options' in cond && cond.$options !== '') return NONE;
      return and(ops.map((op) => this.operator(key, kind, op, cond[op], params)));
    }
    return this.operator(key, kind, '$eq', cond, params);
  }

  /**
   * Conditions on the elements of a document array, each an EXISTS over json_each: `$elemMatch`
   * (one element meets every condition), and `array.path` compared to values (some element's value
   * does, each operator on its own, as MongoDB reads a dotted path through an array). Null, $ne,
   * $nin and $exists through an array have rules of their own: left to JavaScript.
   */
  private inDocumentArray(key: string, cond: unknown, params: Params): SqlCondition | undefined {
    const found = documentArrayOf(this.schema, key);
    if (!found) return undefined;
    let elements = this.elements.get(found.array);
    if (!elements) this.elements.set(found.array, (elements = new FilterTranslator(found.schema, undefined, `e${this.depth + 1}.value`, this.depth + 1)));
    const array = sqlString(jsonPath(found.array));
    // the json_type test first: most documents hold no such array, and it costs far less than json_each
    // jsonb_each: an element that is an object comes as binary JSON, which conditions read without parsing it
    const exists = (where: string) => `(json_type(${this.base}, ${array}) = 'array' AND EXISTS (SELECT 1 FROM jsonb_each(${this.base}, ${array}) AS e${this.depth + 1} WHERE ${where}))`;
    const mark = params.values.length;
    const within = (filter: Filter): SqlCondition => {
      const c = elements!.translate(filter, params);
      return c.exact && c.sql !== undefined ? { sql: exists(c.sql), exact: true } : NONE;
    };
    let result: SqlCondition;
    if (found.rest === '') {
      const keys = isPlainObject(cond) ? Object.keys(cond) : [];
      const query = keys.length === 1 && keys[0] === '$elemMatch' ? (cond as Record<string, unknown>).$elemMatch : undefined;
      result = isPlainObject(query) && Object.keys(query).length > 0 && Object.keys(query).every((k) => !k.startsWith('$') || k === '$and' || k === '$or') ? within(query as Filter) : NONE;
    } else {
      const ops = isPlainObject(cond) && Object.keys(cond).length > 0 && Object.keys(cond).every((k) => k.startsWith('$')) ? cond : { $eq: cond };
      const parts = Object.keys(ops).map((op) => {
        const operand = ops[op];
        const plain = operand !== null && operand !== undefined && !(Array.isArray(operand) && operand.some((x) => x === null));
        return ['$eq', '$in', '$gt', '$gte', '$lt', '$lte'].includes(op) && plain ? within({ [found.rest]: { [op]: operand } }) : NONE;
      });
      result = and(parts);
    }
    if (result.sql === undefined || !result.exact) params.values.length = mark;
    return result.sql === undefined || !result.exact ? NONE : result;
  }

  private operator(path: string, kind: PathKind, op: string, operand: unknown, params: Params): SqlCondition {
    if (op === '$exists') {
      if (typeof operand !== 'boolean') return NONE;
      return kind === 'id' ? (operand ? ALL : { sql: '0', exact: true }) : this.exists(path, operand);
    }
    if (kind === 'string[]' || kind === 'number[]') return arrayOperator(path, kind, op, operand, params, this.base);
    const key = this.keyOf(path, kind);
    const raw = rawExpr(path, this.base);
    if (kind === 'date' && typeof operand === 'string' && ['$eq', '$gt', '$gte', '$lt', '$lte'].includes(op)) {
      // a time an older build stored as a string (before its migration) compares as a string
      const sign = { $eq: '=', $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' }[op];
      return { sql: `(json_type(${this.base}, ${sqlString(jsonPath(path))}) = 'text' AND ${raw} ${sign} ${params.bind(operand)})`, exact: true };
    }
    const isNull = () => (kind === 'date' ? `(${key} = ${NULL_KEY} AND ${raw} IS NULL)` : `${key} = ${NULL_KEY}`);
    const notNull = () => (kind === 'date' ? `${raw} IS NOT NULL` : `${key} != ${NULL_KEY}`);
    switch (op) {
      case '$options':
        return ALL; // '' (anything else was refused with its $regex)
      case '$regex':
        return kind === 'string' || kind === 'id' ? literalMatch(kind === 'id' ? '_id' : raw, operand, params) : NONE;
      case '$type':
        return typeIs(kind, kind === 'date' ? `json_extract(${this.base}, ${sqlString(`${jsonPath(path)}."$date"`)})` : raw, operand);
      case '$eq':
      case '$ne': {
        if (operand === null || operand === undefined) return { sql: op === '$eq' ? isNull() : notNull(), exact: true };
        const v = sqlValue(kind, operand);
        if (v === undefined) return NONE;
        return { sql: `${key} ${op === '$eq' ? '=' : '!='} ${params.bind(v)}`, exact: true };
      }
      case '$in':
      case '$nin': {
        if (!Array.isArray(operand)) return NONE;
        const values: (string | number)[] = [];
        let withNull = false;
        for (const x of operand) {
          if (x === null) withNull = true;
          else {
            const v = sqlValue(kind, x);
            if (v === undefined) return NONE;
            values.push(v);
          }
        }
        const list = values.length ? `${key} IN (${values.map((v) => params.bind(v)).join(', ')})` : undefined;
        if (op === '$in') {
          const parts = [list, withNull ? isNull() : undefined].filter(Boolean);
          return { sql: parts.length === 0 ? '0' : parts.length === 1 ? parts[0] : `(${parts.join(' OR ')})`, exact: true };
        }
        const parts = [list && `NOT (${list})`, withNull ? notNull() : undefined].filter(Boolean);
        return parts.length === 0 ? ALL : { sql: parts.join(' AND '), exact: true };
      }
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte': {
        if (kind === 'boolean') return NONE;
        const v = sqlValue(kind, operand);
        if (v === undefined) return NONE;
        const sign = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' }[op];
        // MongoDB compares within one type: keep the other types' keys out of the range
        // (numbers sort below strings in SQLite, and null is the -Infinity key)
        const upward = op === '$gt' || op === '$gte';
        const bracket = kind === 'string' || kind === 'id' ? (upward ? '' : ` AND ${key} >= ''`) : upward ? (kind === 'number' ? ` AND ${key} < ''` : '') : ` AND ${key} > ${NULL_KEY}`;
        return { sql: `${key} ${sign} ${params.bind(v)}${bracket}`, exact: true };
      }
      default:
        return NONE;
    }
  }
}

/**
 * `$type` on a typed path, which holds its type or null: an alias of that type tests for a value
 * (MongoDB's 'number' is any numeric type). Other types are left to JavaScript (a Date path may still
 * hold a string an older build wrote).
 */
function typeIs(kind: PathKind, raw: string, operand: unknown): SqlCondition {
  const aliases: Partial<Record<PathKind, unknown[]>> = { string: ['string', 2], date: ['date', 9], boolean: ['bool', 8], number: ['number'] };
  return aliases[kind]?.includes(operand) ? { sql: `${raw} IS NOT NULL`, exact: true } : NONE;
}

/**
 * A regular expression that only matches a literal text (what the segment compiler writes for
 * "starts with", "ends with", "contains": escaped text, optionally anchored by `^` at the start and
 * by `(?![\s\S])` at the end) as SQL on a string value: substr or instr compare characters, which
 * for a text without surrogates is what a JavaScript or PCRE match of it does. Anything else
 * (classes, quantifiers, `$`, flags) is left to JavaScript.
 */
function literalMatch(raw: string, pattern: unknown, params: Params): SqlCondition {
  if (typeof pattern !== 'string') return NONE;
  const END = '(?![\\s\\S])';
  let body = pattern;
  const start = body.startsWith('^');
  if (start) body = body.slice(1);
  const end = body.endsWith(END);
  if (end) body = body.slice(0, -END.length);
  let text = '';
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (ch === '\\') {
      const next = body[i + 1];
      if (next === undefined || /[A-Za-z0-9]/.test(next)) return NONE; // \d, \b, \1, \u...: not a literal character
      text += next;
      i++;
    } else if ('^$.*+?()[]{}|'.includes(ch)) return NONE;
    else text += ch;
  }
  if (/[\uD800-\uDFFF]/.test(text)) return NONE;
  if (text === '') return { sql: `${raw} IS NOT NULL`, exact: true }; // every string
  const v = params.bind(text);
  if (start && end) return { sql: `${raw} = ${v}`, exact: true };
  if (start) return { sql: `substr(${raw}, 1, ${text.length}) = ${v}`, exact: true };
  if (end) return { sql: `substr(${raw}, ${-text.length}) = ${v}`, exact: true };
  return { sql: `instr(${raw}, ${v}) > 0`, exact: true };
}

/**
 * Arrays of strings or numbers: an element (or the value itself) equal to the operand, as MongoDB
 * matches arrays; `$ne` / `$nin`: no element equal (a missing array has none).
 */
function arrayOperator(path: string, kind: 'string[]' | 'number[]', op: string, operand: unknown, params: Params, base: string): SqlCondition {
  const scalar = kind === 'string[]' ? 'string' : 'number';
  const none = op === '$ne' || op === '$nin';
  const values = op === '$eq' || op === '$ne' ? [operand] : (op === '$in' || op === '$nin') && Array.isArray(operand) ? operand : undefined;
  if (!values) return NONE;
  const bound: (string | number)[] = [];
  for (const x of values) {
    const v = sqlValue(scalar, x);
    if (v === undefined) return NONE; // null, arrays, other types: JavaScript decides
    bound.push(v);
  }
  if (bound.length === 0) return none ? ALL : { sql: '0', exact: true };
  const test = bound.length === 1 ? `value = ${params.bind(bound[0])}` : `value IN (${bound.map((v) => params.bind(v)).join(', ')})`;
  return { sql: `${none ? 'NOT ' : ''}EXISTS (SELECT 1 FROM jsonb_each(${base}, ${sqlString(jsonPath(path))}) WHERE ${test})`, exact: true };
}

function and(parts: SqlCondition[]): SqlCondition {
  const sql = parts.filter((p) => p.sql !== undefined).map((p) => p.sql!);
  return { sql: sql.length === 0 ? undefined : sql.length === 1 ? sql[0] : sql.join(' AND '), exact: parts.every((p) => p.exact) };
}

/** ORDER BY for a sort on typed scalar paths (or undefined: the sort runs in JavaScript). */
export function orderBy(translator: FilterTranslator, sort: Record<string, 1 | -1> | undefined): string | undefined {
  const paths = sort ? Object.keys(sort) : [];
  if (paths.length === 0) return undefined;
  const terms: string[] = [];
  for (const path of paths) {
    const kind = translator.kindOf(path);
    if (kind === undefined || kind === 'string[]' || kind === 'number[]') return undefined;
    terms.push(`${translator.keyOf(path, kind)} ${sort![path] === -1 ? 'DESC' : 'ASC'}`);
  }
  return terms.join(', ');
}
