/**
 * Multikey indexes: a MongoDB index on an array (`{ accountId: 1, tags: 1 }`, `{ accountId: 1,
 * 'orders.sourceId': 1 }`) has one entry per element. SQLite indexes one value per row, so such an
 * index becomes a side table `<collection>.<index>.keys (prefix keys..., v, rid)`, one row per element,
 * kept by triggers on the collection's table (insert, an update that changes the array or the
 * prefix, delete) and filled from the stored documents when it is created. A query that pins the
 * index's scalar prefix and compares the array's elements to values (`tags: id`,
 * `'orders.sourceId': { $in: [...] }`, an `$elemMatch` on the element path, or an `$or` of such)
 * gets `rid IN (SELECT rid FROM <side table> WHERE ...)`: the rows it reads are the matching ones,
 * not the account's. The filter itself stays in the WHERE, so the result is unchanged.
 */
import mongoose from 'mongoose';
import { defaultIndexName } from '../schema';
import type { Filter } from '../types';
import { isPlainObject } from '../values';
import type { Connection } from './connection';
import { pinnedValues } from './indexes';
import type { KeyColumns } from './keys';
import { documentArrayOf, ident, jsonPath, pathKind, rawExpr, ScalarKind, sqlString } from './paths';
import { FilterTranslator, sqlValue } from './translate';

interface Multikey {
  table: string;
  prefix: { path: string; kind: ScalarKind | 'id' }[];
  /** The element path as a filter names it, and how an $elemMatch names it. */
  path: string;
  array: string;
  rest: string;
  kind: ScalarKind;
  /** DDL (table, index, triggers) and the statement filling it from the stored documents. */
  ddl: string[];
  fill: string;
}

export class MultikeyIndexes {
  readonly defs: Multikey[] = [];

  constructor(
    private readonly collection: string,
    schema: mongoose.Schema,
    translator: FilterTranslator,
    private readonly keys: KeyColumns,
  ) {
    for (const [fields, options = {}] of schema.indexes() as [Record<string, unknown>, Record<string, unknown> | undefined][]) {
      if (options.unique || options.sparse || options.partialFilterExpression) continue;
      const paths = Object.keys(fields);
      const prefix: Multikey['prefix'] = [];
      for (const path of paths) {
        const kind = translator.kindOf(path);
        if (kind === undefined || kind === 'string[]' || kind === 'number[]') break;
        prefix.push({ path, kind });
      }
      const path = paths[prefix.length];
      if (path === undefined || prefix.length === 0 || prefix.some((p) => p.kind === 'id')) continue;
      const element = elementOf(schema, path);
      if (!element) continue;
      this.defs.push(this.define(`${collection}.${(options.name as string | undefined) ?? defaultIndexName(fields)}.keys`, prefix, path, element));
    }
  }

  private define(table: string, prefix: Multikey['prefix'], path: string, e: { array: string; rest: string; kind: ScalarKind }): Multikey {
    const t = ident(table);
    const coll = ident(this.collection);
    const cols = prefix.map((_p, i) => `k${i}`);
    const inner = sqlString(e.kind === 'date' ? `${jsonPath(e.rest)}."$date"` : jsonPath(e.rest));
    const value = (row: string) => (e.rest === '' ? `${row}.value` : `json_extract(${row}.value, ${inner})`);
    // `row`: the collection's row (a trigger's NEW, or the table itself when filling)
    const select = (row: string) =>
      `SELECT ${prefix.map((p) => this.keys.key(p.path, p.kind, row)).join(', ')}, ${value('e')}, ${row}.rid FROM json_each(${row}.doc, ${sqlString(jsonPath(e.array))}) AS e WHERE ${value('e')} IS NOT NULL`;
    // an update rewrites the document's entries only when the array or the prefix changed
    const changed = [`${rawExpr(e.array, 'OLD.doc')} IS NOT ${rawExpr(e.array, 'NEW.doc')}`, ...prefix.map((p) => `${this.keys.key(p.path, p.kind, 'OLD')} IS NOT ${this.keys.key(p.path, p.kind, 'NEW')}`)];
    const ddl = [
      `CREATE TABLE ${t} (${cols.join(', ')}, v, rid INTEGER NOT NULL, PRIMARY KEY (${cols.join(', ')}, v, rid)) WITHOUT ROWID`,
      `CREATE INDEX ${ident(`${table}.rid`)} ON ${t} (rid)`,
      `CREATE TRIGGER ${ident(`${table}.insert`)} AFTER INSERT ON ${coll} BEGIN INSERT OR IGNORE INTO ${t} ${select('NEW')}; END`,
      `CREATE TRIGGER ${ident(`${table}.update`)} AFTER UPDATE OF doc ON ${coll} WHEN ${changed.join(' OR ')} BEGIN DELETE FROM ${t} WHERE rid = OLD.rid; INSERT OR IGNORE INTO ${t} ${select('NEW')}; END`,
      `CREATE TRIGGER ${ident(`${table}.delete`)} AFTER DELETE ON ${coll} BEGIN DELETE FROM ${t} WHERE rid = OLD.rid; END`,
    ];
    const fill = `INSERT OR IGNORE INTO ${t} ${select(coll).replace(`FROM json_each(`, `FROM ${coll}, json_each(`)}`;
    return { table, prefix, path, array: e.array, rest: e.rest, kind: e.kind, ddl, fill };
  }

  /**
   * Creates what is missing or changed, drops what the schema no longer declares (the definitions
   * are kept in _store_meta). A side table whose triggers alone changed keeps its rows.
   */
  sync(db: Connection): void {
    const existing = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE ? ESCAPE '\\'`).all(`${this.collection.replace(/[\\%_]/g, '\\$&')}.%.keys`) as { name: string }[];
    const wanted = new Map(this.defs.map((d) => [d.table, d]));
    const dropTriggers = (name: string) => {
      for (const trigger of ['insert', 'update', 'delete']) db.exec(`DROP TRIGGER IF EXISTS ${ident(`${name}.${trigger}`)}`);
    };
    for (const { name } of existing) {
      const def = wanted.get(name);
      const stored = db.prepare(`SELECT value FROM _store_meta WHERE key = ?`).get(`multikey:${name}`) as { value: string } | undefined;
      if (def && stored?.value === def.ddl.join(';\n')) {
        wanted.delete(name);
        continue;
      }
      if (def && stored?.value.split(';\n').slice(0, 2).join(';\n') === def.ddl.slice(0, 2).join(';\n')) {
        dropTriggers(name);
        for (const sql of def.ddl.slice(2)) db.exec(sql);
        db.prepare(`UPDATE _store_meta SET value = ? WHERE key = ?`).run(def.ddl.join(';\n'), `multikey:${name}`);
        wanted.delete(name);
        continue;
      }
      dropTriggers(name);
      db.exec(`DROP TABLE ${ident(name)}`);
      db.prepare(`DELETE FROM _store_meta WHERE key = ?`).run(`multikey:${name}`);
    }
    for (const def of wanted.values()) {
      dropTriggers(def.table);
      for (const sql of def.ddl) db.exec(sql);
      db.exec(def.fill);
      db.prepare(`INSERT OR REPLACE INTO _store_meta (key, value) VALUES (?, ?)`).run(`multikey:${def.table}`, def.ddl.join(';\n'));
    }
  }

  /** `rid IN (...)` for a filter the side tables can serve (its values appended to `params`), or undefined. */
  restriction(filter: Filter, params: (string | number)[]): string | undefined {
    const one = this.lookup(filter);
    if (one) {
      params.push(...one.params);
      return `rid IN (${one.sql})`;
    }
    const branches = filter.$or;
    if (!Array.isArray(branches) || branches.length === 0 || !branches.every(isPlainObject)) return undefined;
    const { $or: _ignored, ...rest } = filter;
    const parts = branches.map((b) => this.lookup({ ...rest, ...(b as Filter) }));
    if (parts.some((p) => p === undefined)) return undefined;
    for (const p of parts) params.push(...p!.params);
    return `rid IN (${parts.map((p) => p!.sql).join(' UNION ')})`;
  }

  private lookup(filter: Filter): { sql: string; params: (string | number)[] } | undefined {
    for (const def of this.defs) {
      const params: (string | number)[] = [];
      const terms: string[] = [];
      const pin = (column: string, kind: ScalarKind | 'id', values: unknown[] | undefined): boolean => {
        const bound = values?.map((v) => sqlValue(kind, v));
        if (!bound || bound.length === 0 || bound.some((v) => v === undefined)) return false;
        terms.push(bound.length === 1 ? `${column} = ?` : `${column} IN (${bound.map(() => '?').join(', ')})`);
        params.push(...(bound as (string | number)[]));
        return true;
      };
      if (!def.prefix.every((p, i) => pin(`k${i}`, p.kind, pinnedValues(filter, p.path)))) continue;
      const elemMatch = isPlainObject(filter[def.array]) ? (filter[def.array] as Record<string, unknown>).$elemMatch : undefined;
      const values = pinnedValues(filter, def.path) ?? (def.rest !== '' && isPlainObject(elemMatch) ? pinnedValues(elemMatch, def.rest) : undefined);
      if (!pin('v', def.kind, values)) continue;
      return { sql: `SELECT rid FROM ${ident(def.table)} WHERE ${terms.join(' AND ')}`, params };
    }
    return undefined;
  }
}

/** The elements an index field names: a string/number array, or a scalar path inside a document array. */
function elementOf(schema: mongoose.Schema, path: string): { array: string; rest: string; kind: ScalarKind } | undefined {
  const kind = pathKind(schema, path);
  if (kind === 'string[]' || kind === 'number[]') return { array: path, rest: '', kind: kind === 'string[]' ? 'string' : 'number' };
  const inArray = documentArrayOf(schema, path);
  if (!inArray || inArray.rest === '') return undefined;
  const inner = pathKind(inArray.schema, inArray.rest);
  return inner === 'string' || inner === 'number' || inner === 'date' || inner === 'boolean' ? { array: inArray.array, rest: inArray.rest, kind: inner } : undefined;
}
