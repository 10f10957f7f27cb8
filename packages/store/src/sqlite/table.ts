/**
 * One collection's table: `(rid INTEGER PRIMARY KEY, _id TEXT UNIQUE, doc)`, the document as SQLite's
 * binary JSON of its JSON text (codec.ts), the key columns (keys.ts), and the schema's indexes on them
 * (indexes.ts). Reads and row writes, synchronous, on the connection they are given (reads on the
 * reader, writes on the writer inside its transaction).
 *
 * A read is planned as: the filter's translatable part as WHERE (translate.ts) plus the conditions of
 * the partial indexes it implies, the sort as ORDER BY when its paths are typed scalars; SQLite picks
 * the index. When the WHERE is exact, skip and limit go to SQL too and a page reads only its own
 * rows; otherwise rows are tested with the JavaScript filter as they come, in ORDER BY order, and
 * the read stops once it has its page. A sort SQL cannot do (an array or Mixed path) sorts the
 * matches in JavaScript.
 */
import mongoose from 'mongoose';
import { decodeDocument, encodeDocument } from '../codec';
import { DuplicateKeyError } from '../errors';
import { compileFilter } from '../filter';
import { sortPage } from '../sort';
import type { CollectionOptions, Filter } from '../types';
import { Doc, getPath, isPlainObject } from '../values';
import type { Connection } from './connection';
import { IndexDef, indexDefs, pinnedValues } from './indexes';
import { KeyColumns, keyColumnsOf } from './keys';
import { MultikeyIndexes } from './multikey';
import { KeptCounts, keptCounts } from './counts';
import { ident, NULL_KEY } from './paths';
import type { ChunkedCount } from './scans';
import { FilterTranslator, orderBy, Params } from './translate';

export interface ReadOptions {
  sort?: Record<string, 1 | -1>;
  skip?: number;
  /** undefined: no limit. */
  limit?: number;
}

/** A read as SQL plus what JavaScript does with its rows; each run gets a fresh collector. */
export interface RowQuery<R> {
  sql: string;
  params: (string | number)[];
  collector(): Collector<R>;
}

export interface Collector<R> {
  /** Takes a row; false: no more rows are needed. */
  onRow(row: Record<string, unknown>): boolean | void;
  result(): R;
}

/** Runs a read at once on `db` (synchronously). */
export function runNow<R>(db: Connection, query: RowQuery<R>): R {
  const c = query.collector();
  for (const row of db.prepare(query.sql).iterate(...query.params) as Iterable<Record<string, unknown>>) if (c.onRow(row) === false) break;
  return c.result();
}

/**
 * A stored document as JSON text. `doc` holds SQLite's binary JSON (JSONB: written with `jsonb(?)`),
 * which conditions on many rows read without parsing the document; rows written as text by an
 * earlier build read the same way (json() and json_extract take both).
 */
const DOC = 'json(doc) AS doc';

const single = <R>(read: (row: Record<string, unknown>) => R) => (): Collector<R> => {
  let value: R;
  return { onRow: (row) => ((value = read(row)), false), result: () => value };
};

/**
 * Whether a row meets a condition, as 1 or 0. A CASE, not the condition's value: SQLite computes an
 * AND / OR used as a value from both its operands, but tests a CASE's condition as it tests a WHERE,
 * stopping at the first operand that decides it. A compiled segment is an $or of groups, each an
 * AND: read as a value, every condition of every group was evaluated on every contact, each a walk
 * of its binary JSON (measured on bench/segments' 100k contacts: 494 -> 382 ms per count).
 */
const mark = (cond: string) => `CASE WHEN ${cond} THEN 1 ELSE 0 END`;

/** Counts the rows a marked read (Table.slicedRead) says match. */
const counter = (): Collector<number> => {
  let n = 0;
  return { onRow: (row) => void (row.m === 1 && n++), result: () => n };
};

interface Plan {
  /** The table, with the index SQLite must use when the filter names the documents by _id. */
  from: string;
  where: string;
  /** The conditions of `where` alone (no WHERE), '1' when none. */
  cond: string;
  params: (string | number)[];
  exact: boolean;
  order?: string;
}

export class Table {
  readonly sqlName: string;
  readonly keys: KeyColumns;
  readonly translator: FilterTranslator;
  readonly indexes: IndexDef[];
  readonly multikey: MultikeyIndexes;
  /** Rows decoded by reads since the table was opened (tests prove index use with it). */
  rowsRead = 0;
  /** The table and its indexes exist as the schema says (sync ran). */
  ready = false;
  private readonly indexOnlyPlans = new Map<string, boolean>();

  readonly counts: KeptCounts[];
  /** The retention rule (CollectionOptions.expireAfter): its path's key, and how old a document may get. */
  readonly expiry?: { key: string; ms: number };

  constructor(
    readonly name: string,
    readonly schema: mongoose.Schema,
    options: CollectionOptions = {},
  ) {
    this.sqlName = ident(name);
    this.keys = keyColumnsOf(name, schema, options.countBy);
    this.translator = new FilterTranslator(schema, this.keys);
    this.indexes = indexDefs(name, schema, this.translator, this.keys);
    this.multikey = new MultikeyIndexes(name, schema, this.translator, this.keys);
    this.counts = options.countBy ? keptCounts(name, schema, options.countBy, this.keys) : [];
    if (options.expireAfter) this.expiry = { key: this.keys.key(options.expireAfter.path, 'date'), ms: options.expireAfter.days * 86_400_000 };
  }

  static createSql(name: string): string {
    return `CREATE TABLE IF NOT EXISTS ${ident(name)} (rid INTEGER PRIMARY KEY, _id TEXT NOT NULL UNIQUE, doc NOT NULL)`;
  }

  /**
   * Creates the table and brings its indexes in line with the schema (like syncIndexes). A unique
   * index that the stored documents violate fails with DuplicateKeyError, as on MongoDB.
   */
  sync(db: Connection): void {
    db.exec(Table.createSql(this.name));
    const existing = db.prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`).all(this.name) as { name: string; sql: string }[];
    const wanted = new Map(this.indexes.map((d) => [d.sqlName, d]));
    for (const { name, sql } of existing) {
      if (wanted.get(name)?.sql === sql) wanted.delete(name);
      else db.exec(`DROP INDEX ${ident(name)}`);
    }
    this.keys.addMissing(db);
    for (const def of wanted.values()) {
      try {
        db.exec(def.sql);
      } catch (err) {
        throw this.duplicateOf(err, () => this.firstDuplicate(db, def)) ?? err;
      }
    }
    this.multikey.sync(db);
    for (const kept of this.counts) kept.sync(db);
    KeptCounts.dropOthers(db, this.name, this.counts);
    this.keys.dropUnwanted(db); // nothing reads them any more
    this.ready = true;
  }

  plan(filter: Filter, sort: ReadOptions['sort']): Plan {
    const params = new Params();
    const cond = this.translator.translate(filter, params);
    const where = cond.sql === undefined ? [] : [cond.sql];
    // say what partial indexes the filter implies, so SQLite may use them
    for (const index of this.indexes) if (index.where && index.implied?.(filter)) where.push(index.where);
    // array elements compared to values: read the rows a multikey side table names
    const elements = this.multikey.restriction(filter, params.values);
    if (elements) where.push(elements);
    // Without statistics SQLite's planner prefers an index on accountId to the _id key once an IN
    // list has a few ids, and then reads the whole account: a filter naming its documents by _id
    // always reads them by _id.
    const from = pinsIds(filter) ? `${this.sqlName} INDEXED BY ${ident(`sqlite_autoindex_${this.name}_1`)}` : this.sqlName;
    return { from, where: where.length ? ` WHERE ${where.join(' AND ')}` : '', cond: where.length ? where.join(' AND ') : '1', params: params.values, exact: cond.exact, order: orderBy(this.translator, sort) };
  }

  /**
   * A sliced read of the filter: every row of the longest index prefix the filter fixes (the account:
   * an index range), each with `m`, whether it meets the whole SQL condition, or its `doc` only when it
   * does (null otherwise). Filtering in SQL would let one step of the statement walk any number of
   * rows that do not match (a rare match over a million contacts) inside one synchronous call; this
   * way each row comes back, to be counted in the slice. When an index (or an array's side table)
   * serves every condition, SQLite reads only matching rows: then the read is the plain one.
   */
  private slicedRead(filter: Filter, sort: ReadOptions['sort'], what: 'doc' | 'm'): { sql: string; params: (string | number)[]; exact: boolean; served: boolean } {
    const full = this.plan(filter, sort);
    const prefix = this.fixedPrefix(filter, sort !== undefined && Object.keys(sort).length > 0);
    const served = Object.keys(filter).every((k) => prefix.includes(k)) || this.multikey.restriction(filter, []) !== undefined;
    const bounds = [...prefix, ...this.rangeAfter(filter, prefix, sort)];
    const range = served ? full : this.plan(Object.fromEntries(bounds.map((k) => [k, filter[k]])), sort);
    const column = served ? (what === 'm' ? '1 AS m' : DOC) : what === 'm' ? `${mark(full.cond)} AS m` : `CASE WHEN ${full.cond} THEN json(doc) END AS doc`;
    return {
      sql: `SELECT ${column} FROM ${range.from}${range.where}${full.order ? ` ORDER BY ${full.order}` : ''}`,
      params: served ? full.params : [...full.params, ...range.params],
      exact: full.exact,
      served,
    };
  }

  /**
   * The longest run of an index's leading fields that the filter fixes to one scalar each, or, in a
   * read without a sort, to a list of them (`$in`), which SQLite reads as one index probe per value
   * (a batch of addresses in an account: the matches, not the account). With a sort, such a list
   * would have SQLite sort every match before the first row comes back.
   */
  private fixedPrefix(filter: Filter, sorted: boolean): string[] {
    const scalar = (v: unknown) => ['string', 'number', 'boolean'].includes(typeof v);
    const fixed = (k: string) => scalar(filter[k]) || (!sorted && (pinnedValues(filter, k)?.every(scalar) ?? false));
    let prefix: string[] = [];
    for (const index of this.indexes) {
      if (index.where && !index.implied?.(filter)) continue;
      const stop = index.fields.findIndex((f) => !fixed(f));
      const run = stop === -1 ? index.fields : index.fields.slice(0, stop);
      if (run.length > prefix.length) prefix = run;
    }
    return prefix;
  }

  /**
   * The index field right after `prefix` when the filter bounds it to a range ($gt, $gte, $lt, $lte of
   * a scalar or date) and the sort, if any, is that index's order from there on: SQLite then walks that
   * range of the index, in order, and nothing outside it (the due entries among a history that keeps
   * growing, instead of the history). Empty when no index qualifies.
   */
  private rangeAfter(filter: Filter, prefix: string[], sort: ReadOptions['sort']): string[] {
    const bound = (v: unknown) => ['string', 'number'].includes(typeof v) || v instanceof Date;
    const ranged = (k: string) => {
      const cond = filter[k];
      if (!isPlainObject(cond)) return false;
      const ops = Object.entries(cond);
      return ops.length > 0 && ops.every(([op, v]) => ['$gt', '$gte', '$lt', '$lte'].includes(op) && bound(v));
    };
    const sortKeys = Object.keys(sort ?? {});
    for (const index of this.indexes) {
      if (index.where && !index.implied?.(filter)) continue;
      const next = index.fields[prefix.length];
      if (next === undefined || !prefix.every((f, i) => index.fields[i] === f) || !ranged(next)) continue;
      if (sortKeys.every((k, i) => index.fields[prefix.length + i] === k)) return [next];
    }
    return [];
  }

  /**
   * A find, planned: its SQL and what JavaScript does with the rows (`collect`). Run it at once with
   * `find` (writes, bounded reads) or in slices on a scan connection (collection.ts).
   */
  findQuery(filter: Filter, options: ReadOptions = {}, sliced = false): RowQuery<Doc[]> {
    const skip = Math.max(0, options.skip ?? 0);
    const limit = options.limit;
    if (limit !== undefined && limit <= 0) return { sql: 'SELECT NULL AS doc WHERE 0', params: [], collector: () => ({ onRow: () => false, result: () => [] }) };
    const sorted = options.sort !== undefined && Object.keys(options.sort).length > 0;
    const plan = this.plan(filter, options.sort);
    // sliced: every row of the index prefix comes back (matches with their doc), see slicedRead
    const sparse = sliced ? this.slicedRead(filter, options.sort, 'doc') : undefined;
    const marked = sparse?.served ? undefined : sparse;
    let sql = marked?.sql ?? `SELECT ${DOC} FROM ${plan.from}${plan.where}${plan.order ? ` ORDER BY ${plan.order}` : ''}`;
    const params = marked?.params ?? plan.params;
    if (!marked && plan.exact && (plan.order || !sorted)) {
      if (limit !== undefined || skip > 0) sql += ` LIMIT ${limit ?? -1} OFFSET ${skip}`;
      return {
        sql,
        params: plan.params,
        collector: () => {
          const out: Doc[] = [];
          return {
            onRow: (row) => {
              this.rowsRead++;
              out.push(decodeDocument(row.doc as string));
            },
            result: () => out,
          };
        },
      };
    }
    const jsSort = sorted && !plan.order;
    return {
      sql,
      params,
      collector: () => {
        const predicate = plan.exact ? () => true : compileFilter(filter);
        let out: Doc[] = [];
        // in SQL order (or none): stop at the end of the page; a JavaScript sort keeps the best
        // skip + limit matches so far (trimmed whenever twice that many are held)
        const stopAt = limit === undefined ? Infinity : skip + limit;
        let seen = 0;
        return {
          onRow: (row) => {
            this.rowsRead++;
            if (row.doc === null) return;
            const doc = decodeDocument(row.doc as string);
            if (!predicate(doc)) return;
            if (jsSort) {
              out.push(doc);
              if (out.length >= 2 * stopAt) out = sortPage(out, options.sort!, 0, stopAt);
              return;
            }
            if (seen++ >= skip) out.push(doc);
            if (seen >= stopAt) return false;
          },
          result: () => (jsSort ? sortPage(out, options.sort!, skip, limit) : out),
        };
      },
    };
  }

  /** A scan's SQL and the decoding of its rows (undefined: a row the filter does not match). */
  scanQuery(filter: Filter, sort: ReadOptions['sort']): { sql: string; params: (string | number)[]; test: (row: Record<string, unknown>) => Doc | undefined } {
    if (sort && Object.keys(sort).length > 0 && !orderBy(this.translator, sort)) throw new Error(`${this.name}: a scan sorts by typed scalar paths only`);
    const read = this.slicedRead(filter, sort, 'doc');
    const predicate = read.exact ? undefined : compileFilter(filter);
    return {
      sql: read.sql,
      params: read.params,
      test: (row) => {
        this.rowsRead++;
        if (row.doc === null) return undefined;
        const doc = decodeDocument(row.doc as string);
        return !predicate || predicate(doc) ? doc : undefined;
      },
    };
  }

  /** The documents matching a (cast) filter, sorted, skipped and limited, read at once on `db`. */
  find(db: Connection, filter: Filter, options: ReadOptions = {}): Doc[] {
    return runNow(db, this.findQuery(filter, options));
  }

  /**
   * A count, planned: `native` when SQLite answers it from an index alone (or by `_id`), which takes
   * no longer than an index walk; otherwise its rows are stepped through (the JavaScript filter, or
   * conditions SQLite evaluates on the stored documents).
   */
  countQuery(db: Connection, filter: Filter): RowQuery<number> & { native: boolean; chunked?: ChunkedCount } {
    const kept = this.keptCount(filter);
    if (kept) return { native: true, ...kept, collector: single((row) => row.n as number) };
    const plan = this.plan(filter, undefined);
    if (plan.exact) {
      const native = this.indexOnly(db, `SELECT count(*) AS n FROM ${plan.from}${plan.where}`, plan.params);
      if (native) return { native, sql: `SELECT count(*) AS n FROM ${plan.from}${plan.where}`, params: plan.params, collector: single((row) => row.n as number) };
      const read = this.slicedRead(filter, undefined, 'm');
      return { native, sql: read.sql, params: read.params, collector: counter, chunked: this.tableWalk(db, filter, plan) };
    }
    const read = this.slicedRead(filter, undefined, 'doc');
    return {
      native: false,
      sql: read.sql,
      params: read.params,
      collector: () => {
        const predicate = compileFilter(filter);
        let n = 0;
        return {
          onRow: (row) => {
            this.rowsRead++;
            if (row.doc !== null && predicate(decodeDocument(row.doc as string))) n++;
          },
          result: () => n,
        };
      },
    };
  }

  /** The statement reading a kept count (CollectionOptions.countBy) that is exactly this filter's, if any. */
  private keptCount(filter: Filter): { sql: string; params: (string | number)[] } | undefined {
    return this.counts.map((c) => c.lookup(filter)).find((k) => k !== undefined);
  }

  /**
   * An exact count SQLite evaluates on the documents, when they are most of the table's: the index
   * prefix the filter fixes (the account) holds at least a quarter of its rows by a kept count, or
   * the filter fixes none. Then walking the table in rid order reads its pages in sequence, where an
   * index walk seeks every row apart, and counting a chunk of rows in SQL (scans.ts countInChunks)
   * returns no row to JavaScript: about half the time of the row-by-row read. undefined otherwise
   * (a small account, or an array's side table naming the rows).
   */
  private tableWalk(db: Connection, filter: Filter, plan: Plan): ChunkedCount | undefined {
    if (this.multikey.restriction(filter, []) !== undefined) return undefined;
    const prefix = this.fixedPrefix(filter, false);
    if (prefix.length > 0) {
      const kept = this.keptCount(Object.fromEntries(prefix.map((k) => [k, filter[k]])));
      if (!kept) return undefined;
      const rows = runNow(db, { ...kept, collector: single((row) => row.n as number) });
      const last = (db.prepare(`SELECT max(rid) AS n FROM ${this.sqlName}`).get() as { n: number | null }).n ?? 0;
      if (rows * 4 < last) return undefined;
    }
    return {
      sql: `SELECT count(*) AS rows, total(m) AS n, max(rid) AS last FROM (SELECT rid, ${mark(plan.cond)} AS m FROM ${this.sqlName} NOT INDEXED WHERE rid > ? ORDER BY rid LIMIT ?)`,
      params: plan.params,
    };
  }

  count(db: Connection, filter: Filter): number {
    return runNow(db, this.countQuery(db, filter));
  }

  /**
   * Whether SQLite's plan for `sql` reads no stored document: an index alone, or the one row an `_id`
   * names. Cached per statement text (the plan depends on the text and the schema only).
   */
  private indexOnly(db: Connection, sql: string, params: (string | number)[]): boolean {
    let answer = this.indexOnlyPlans.get(sql);
    if (answer === undefined) {
      const details = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail);
      const own = details.filter((d) => d.startsWith(`SCAN ${this.name} `) || d.startsWith(`SEARCH ${this.name} `) || d === `SCAN ${this.name}`);
      answer = own.every((d) => d.includes(' USING COVERING INDEX ') || /USING INDEX sqlite_autoindex_\S+ \(_id=\?\)$/.test(d));
      if (this.indexOnlyPlans.size >= 500) this.indexOnlyPlans.clear();
      this.indexOnlyPlans.set(sql, answer);
    }
    return answer;
  }

  /** SQLite's plan for a read (tests prove that indexes serve pages and sorts). */
  explain(db: Connection, filter: Filter, options: ReadOptions = {}): { sql: string; exact: boolean; plan: string[] } {
    const plan = this.plan(filter, options.sort);
    const sql = `SELECT ${DOC} FROM ${plan.from}${plan.where}${plan.order ? ` ORDER BY ${plan.order}` : ''}`;
    // prepared anew: a cached EXPLAIN never notices a schema change, so it would keep its first plan
    const rows = db.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...plan.params) as { detail: string }[];
    return { sql, exact: plan.exact, plan: rows.map((r) => r.detail) };
  }

  // ---- row writes (writer connection, inside its transaction) ----

  insert(db: Connection, doc: Doc): void {
    this.run(db, this.keys.insertSql(), [doc._id, encodeDocument(doc)], doc);
  }

  /** Stores `doc`, the new version of `before`: the key columns whose paths it changed are set, no other. */
  replace(db: Connection, doc: Doc, before: Doc): void {
    this.run(db, this.keys.updateSql(this.keys.changed(before, doc)), [encodeDocument(doc), doc._id], doc);
  }

  delete(db: Connection, id: string): void {
    db.prepare(`DELETE FROM ${this.sqlName} WHERE _id = ?`).run(id);
  }

  /** Deletes the rows an exact filter selects, in SQL alone; the number deleted. */
  deleteWhere(db: Connection, filter: Filter, limit?: number): number | undefined {
    const plan = this.plan(filter, undefined);
    if (!plan.exact) return undefined;
    if (limit !== undefined) return Number(db.prepare(`DELETE FROM ${this.sqlName} WHERE rid IN (SELECT rid FROM ${plan.from}${plan.where} LIMIT ${limit})`).run(...plan.params).changes);
    return Number(db.prepare(`DELETE FROM ${plan.from}${plan.where}`).run(...plan.params).changes);
  }

  /** Deletes up to `limit` documents past the retention rule at `now` (the oldest first); the number deleted. */
  deleteExpired(db: Connection, now: number, limit: number): number {
    if (!this.expiry) return 0;
    const { key, ms } = this.expiry;
    // a missing or non-Date value has the null key: kept, as MongoDB's TTL monitor keeps it
    const expired = `SELECT rid FROM ${this.sqlName} WHERE ${key} < ? AND ${key} > ${NULL_KEY} ORDER BY ${key} LIMIT ${limit}`;
    return Number(db.prepare(`DELETE FROM ${this.sqlName} WHERE rid IN (${expired})`).run(now - ms).changes);
  }

  private run(db: Connection, sql: string, params: string[], doc: Doc): void {
    try {
      db.prepare(sql).run(...params);
    } catch (err) {
      throw this.duplicateOf(err, () => doc) ?? err;
    }
  }

  /** A unique violation as DuplicateKeyError (with the key read from `offender`), or undefined. */
  private duplicateOf(err: unknown, offender: () => Doc | undefined): DuplicateKeyError | undefined {
    const e = err as { errcode?: number; message?: string };
    if (e?.errcode !== 2067 && e?.errcode !== 1555) return undefined; // SQLITE_CONSTRAINT_UNIQUE / _PRIMARYKEY
    // SQLite names the columns of the index: `UNIQUE constraint failed: <table>.<column>, ...`
    const columns = String(e.message).replace(/^.*UNIQUE constraint failed: /s, '');
    const index = this.indexes.find((d) => d.unique && d.columnNames.map((c) => `${this.name}.${c}`).join(', ') === columns);
    const doc = offender();
    if (!index) return new DuplicateKeyError(this.name, '_id_', { _id: doc?._id ?? null });
    const key: Record<string, unknown> = {};
    for (const f of index.fields) key[f] = doc ? (getPath(doc, f) ?? null) : null;
    return new DuplicateKeyError(this.name, index.name, key);
  }

  /** A stored document sharing its key with another under `def` (to name the key of a failed index build). */
  private firstDuplicate(db: Connection, def: IndexDef): Doc | undefined {
    const keys = def.columns.replace(/ DESC/g, '');
    const row = db.prepare(`SELECT ${DOC} FROM ${this.sqlName}${def.where ? ` WHERE ${def.where}` : ''} GROUP BY ${keys} HAVING count(*) > 1 LIMIT 1`).get() as { doc: string } | undefined;
    return row ? decodeDocument(row.doc) : undefined;
  }
}

/** Whether a (cast) filter names its documents by _id: one id, or a non-empty list of ids (SQL then says `_id = ?` / `_id IN (...)`). */
function pinsIds(filter: Filter): boolean {
  const id = filter._id;
  if (typeof id === 'string') return true;
  if (typeof id !== 'object' || id === null || Array.isArray(id)) return false;
  const keys = Object.keys(id);
  const list = (id as { $in?: unknown }).$in;
  return keys.length === 1 && Array.isArray(list) && list.length > 0 && list.every((v) => typeof v === 'string');
}
