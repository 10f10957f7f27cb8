/**
 * One collection's table: `(rid INTEGER PRIMARY KEY, _id TEXT UNIQUE, doc TEXT)`, the document as
 * JSON (codec.ts), plus the schema's indexes (indexes.ts). Reads and row writes, synchronous, on the
 * connection they are given (reads on the reader, writes on the writer inside its transaction).
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
import type { Filter } from '../types';
import { Doc, getPath } from '../values';
import type { Connection } from './connection';
import { IndexDef, indexDefs } from './indexes';
import { MultikeyIndexes } from './multikey';
import { ident } from './paths';
import { FilterTranslator, orderBy, Params } from './translate';

export interface ReadOptions {
  sort?: Record<string, 1 | -1>;
  skip?: number;
  /** undefined: no limit. */
  limit?: number;
}

interface Plan {
  /** The table, with the index SQLite must use when the filter names the documents by _id. */
  from: string;
  where: string;
  params: (string | number)[];
  exact: boolean;
  order?: string;
}

export class Table {
  readonly sqlName: string;
  readonly translator: FilterTranslator;
  readonly indexes: IndexDef[];
  readonly multikey: MultikeyIndexes;
  /** Rows decoded by reads since the table was opened (tests prove index use with it). */
  rowsRead = 0;
  /** The table and its indexes exist as the schema says (sync ran). */
  ready = false;

  constructor(
    readonly name: string,
    readonly schema: mongoose.Schema,
  ) {
    this.sqlName = ident(name);
    this.translator = new FilterTranslator(schema);
    this.indexes = indexDefs(name, schema, this.translator);
    this.multikey = new MultikeyIndexes(name, schema, this.translator);
  }

  static createSql(name: string): string {
    return `CREATE TABLE IF NOT EXISTS ${ident(name)} (rid INTEGER PRIMARY KEY, _id TEXT NOT NULL UNIQUE, doc TEXT NOT NULL)`;
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
    for (const def of wanted.values()) {
      try {
        db.exec(def.sql);
      } catch (err) {
        throw this.duplicateOf(err, () => this.firstDuplicate(db, def)) ?? err;
      }
    }
    this.multikey.sync(db);
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
    return { from, where: where.length ? ` WHERE ${where.join(' AND ')}` : '', params: params.values, exact: cond.exact, order: orderBy(this.translator, sort) };
  }

  /** The documents matching a (cast) filter, sorted, skipped and limited. */
  find(db: Connection, filter: Filter, options: ReadOptions = {}): Doc[] {
    const skip = Math.max(0, options.skip ?? 0);
    const limit = options.limit;
    if (limit !== undefined && limit <= 0) return [];
    const sorted = options.sort !== undefined && Object.keys(options.sort).length > 0;
    const plan = this.plan(filter, options.sort);
    let sql = `SELECT doc FROM ${plan.from}${plan.where}${plan.order ? ` ORDER BY ${plan.order}` : ''}`;
    if (plan.exact && (plan.order || !sorted)) {
      if (limit !== undefined || skip > 0) sql += ` LIMIT ${limit ?? -1} OFFSET ${skip}`;
      const rows = db.prepare(sql).all(...plan.params) as { doc: string }[];
      this.rowsRead += rows.length;
      return rows.map((r) => decodeDocument(r.doc));
    }
    const predicate = plan.exact ? () => true : compileFilter(filter);
    const out: Doc[] = [];
    // in SQL order (or none): stop at the end of the page; a JavaScript sort needs every match
    const stopAt = sorted && !plan.order ? Infinity : limit === undefined ? Infinity : skip + limit;
    let seen = 0;
    for (const row of db.prepare(sql).iterate(...plan.params) as Iterable<{ doc: string }>) {
      this.rowsRead++;
      const doc = decodeDocument(row.doc);
      if (!predicate(doc)) continue;
      if (sorted && !plan.order) {
        out.push(doc);
        continue;
      }
      if (seen++ >= skip) out.push(doc);
      if (seen >= stopAt) break;
    }
    return sorted && !plan.order ? sortPage(out, options.sort!, skip, limit) : out;
  }

  count(db: Connection, filter: Filter): number {
    const plan = this.plan(filter, undefined);
    if (plan.exact) return (db.prepare(`SELECT count(*) AS n FROM ${plan.from}${plan.where}`).get(...plan.params) as { n: number }).n;
    const predicate = compileFilter(filter);
    let n = 0;
    for (const row of db.prepare(`SELECT doc FROM ${plan.from}${plan.where}`).iterate(...plan.params) as Iterable<{ doc: string }>) {
      this.rowsRead++;
      if (predicate(decodeDocument(row.doc))) n++;
    }
    return n;
  }

  /** SQLite's plan for a read (tests prove that indexes serve pages and sorts). */
  explain(db: Connection, filter: Filter, options: ReadOptions = {}): { sql: string; exact: boolean; plan: string[] } {
    const plan = this.plan(filter, options.sort);
    const sql = `SELECT doc FROM ${plan.from}${plan.where}${plan.order ? ` ORDER BY ${plan.order}` : ''}`;
    const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...plan.params) as { detail: string }[];
    return { sql, exact: plan.exact, plan: rows.map((r) => r.detail) };
  }

  // ---- row writes (writer connection, inside its transaction) ----

  insert(db: Connection, doc: Doc): void {
    this.run(db, `INSERT INTO ${this.sqlName} (_id, doc) VALUES (?, ?)`, [doc._id, encodeDocument(doc)], doc);
  }

  replace(db: Connection, doc: Doc): void {
    this.run(db, `UPDATE ${this.sqlName} SET doc = ? WHERE _id = ?`, [encodeDocument(doc), doc._id], doc);
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
    const message = String(e.message);
    const index = this.indexes.find((d) => message.includes(`index '${d.sqlName}'`));
    const doc = offender();
    if (!index) return new DuplicateKeyError(this.name, '_id_', { _id: doc?._id ?? null });
    const key: Record<string, unknown> = {};
    for (const f of index.fields) key[f] = doc ? (getPath(doc, f) ?? null) : null;
    return new DuplicateKeyError(this.name, index.name, key);
  }

  /** A stored document sharing its key with another under `def` (to name the key of a failed index build). */
  private firstDuplicate(db: Connection, def: IndexDef): Doc | undefined {
    const keys = def.columns.replace(/ DESC/g, '');
    const row = db.prepare(`SELECT doc FROM ${this.sqlName}${def.where ? ` WHERE ${def.where}` : ''} GROUP BY ${keys} HAVING count(*) > 1 LIMIT 1`).get() as { doc: string } | undefined;
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
