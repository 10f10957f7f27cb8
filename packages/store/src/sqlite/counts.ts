/**
 * Kept counts (CollectionOptions.countBy): the number of documents per value of a key (one scalar
 * path, or several counted together), in a side table per key kept by triggers on the collection's
 * table, in the same transaction as every write, and filled from the stored documents when it is
 * created. SQLite counts an index range row by row (about 60 ns a row: 60 ms for a million, all of
 * it in one synchronous step), so a list's total over a large account would cost more than its page
 * and hold the event loop; a count whose filter is exactly one value of each path of a key reads the
 * kept number instead.
 *
 * The first key's table is `<collection>.counts` (columns k, n), the others' `<collection>.counts.<paths
 * joined by _>` (columns k0, k1, ..., n).
 */
import mongoose from 'mongoose';
import type { CollectionOptions, Filter } from '../types';
import type { Connection } from './connection';
import { pinnedValues } from './indexes';
import type { KeyColumns } from './keys';
import { ident, pathKind, ScalarKind } from './paths';
import { sqlValue } from './translate';

/** The keys of a countBy declaration, each a list of paths. */
export function countKeys(countBy: NonNullable<CollectionOptions['countBy']>): string[][] {
  return typeof countBy === 'string' ? [[countBy]] : countBy.map((k) => (typeof k === 'string' ? [k] : [...k]));
}

/** The kept counts a collection declares: one KeptCounts per key. */
export function keptCounts(collection: string, schema: mongoose.Schema, countBy: NonNullable<CollectionOptions['countBy']>, keys: KeyColumns): KeptCounts[] {
  return countKeys(countBy).map((paths, i) => new KeptCounts(collection, i === 0 ? `${collection}.counts` : `${collection}.counts.${paths.join('_')}`, schema, paths, keys));
}

export class KeptCounts {
  private readonly kinds: ScalarKind[];
  private readonly ddl: string[];
  private readonly fill: string;
  private readonly read: string;

  constructor(
    collection: string,
    readonly table: string,
    schema: mongoose.Schema,
    readonly paths: string[],
    keys: KeyColumns,
  ) {
    if (paths.length === 0 || new Set(paths).size !== paths.length) throw new Error(`@mailer/store: a countBy key of ${collection} must name distinct paths`);
    this.kinds = paths.map((path) => {
      const kind = pathKind(schema, path);
      if (kind === undefined || kind === 'id' || kind === 'string[]' || kind === 'number[]') {
        throw new Error(`@mailer/store: countBy of ${collection} must name scalar paths the schema types (String, Number, Boolean, Date), not ${path}`);
      }
      return kind;
    });
    const t = ident(table);
    const coll = ident(collection);
    // the paths' key columns (keys.ts): an update that sets none of them does not run the trigger
    const sources = paths.map((path) => keys.keyColumn(path)!.sql);
    const columns = paths.length === 1 ? ['k'] : paths.map((_, i) => `k${i}`);
    const of = (row: string) => sources.map((c) => `${row}.${c}`).join(', ');
    const add = (row: string, delta: number) => `INSERT INTO ${t} (${columns.join(', ')}, n) VALUES (${of(row)}, ${delta}) ON CONFLICT (${columns.join(', ')}) DO UPDATE SET n = n + ${delta};`;
    const changed = sources.map((c) => `OLD.${c} IS NOT NEW.${c}`).join(' OR ');
    this.ddl = [
      paths.length === 1 ? `CREATE TABLE ${t} (k PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID` : `CREATE TABLE ${t} (${columns.join(', ')}, n INTEGER NOT NULL, PRIMARY KEY (${columns.join(', ')})) WITHOUT ROWID`,
      `CREATE TRIGGER ${ident(`${table}.insert`)} AFTER INSERT ON ${coll} BEGIN ${add('NEW', 1)} END`,
      `CREATE TRIGGER ${ident(`${table}.update`)} AFTER UPDATE OF ${sources.join(', ')} ON ${coll} WHEN ${changed} BEGIN ${add('OLD', -1)} ${add('NEW', 1)} END`,
      `CREATE TRIGGER ${ident(`${table}.delete`)} AFTER DELETE ON ${coll} BEGIN ${add('OLD', -1)} END`,
    ];
    this.fill = `INSERT INTO ${t} (${columns.join(', ')}, n) SELECT ${sources.join(', ')}, count(*) FROM ${coll} GROUP BY ${columns.map((_, i) => i + 1).join(', ')}`;
    this.read = `SELECT ifnull((SELECT n FROM ${t} WHERE ${columns.map((c) => `${c} = ?`).join(' AND ')}), 0) AS n`;
  }

  /**
   * Creates (and fills) the side table, or rebuilds it when its definition changed; when only the
   * triggers did (they read the key columns since those exist), the counts they kept stay. Writer, at open.
   */
  sync(db: Connection): void {
    const stored = db.prepare(`SELECT value FROM _store_meta WHERE key = ?`).get(`counts:${this.table}`) as { value: string } | undefined;
    if (stored?.value === this.ddl.join(';\n')) return;
    const sameTable = stored?.value.split(';\n')[0] === this.ddl[0];
    KeptCounts.drop(db, this.table, sameTable);
    for (const sql of sameTable ? this.ddl.slice(1) : this.ddl) db.exec(sql);
    if (!sameTable) db.exec(this.fill);
    db.prepare(`INSERT OR REPLACE INTO _store_meta (key, value) VALUES (?, ?)`).run(`counts:${this.table}`, this.ddl.join(';\n'));
  }

  /** Drops the side tables of `collection` that are not among `kept` (its options no longer declare them). */
  static dropOthers(db: Connection, collection: string, kept: KeptCounts[]): void {
    const tables = db.prepare(`SELECT substr(key, 8) AS t FROM _store_meta WHERE key = ? OR key LIKE ? ESCAPE '\\'`).all(`counts:${collection}.counts`, `counts:${collection.replace(/[\\%_]/g, '\\$&')}.counts.%`) as { t: string }[];
    for (const { t } of tables) if (!kept.some((k) => k.table === t)) KeptCounts.drop(db, t);
  }

  /** Drops a side table and its triggers (or only its triggers). */
  private static drop(db: Connection, table: string, triggersOnly = false): void {
    for (const trigger of ['insert', 'update', 'delete']) db.exec(`DROP TRIGGER IF EXISTS ${ident(`${table}.${trigger}`)}`);
    if (triggersOnly) return;
    db.exec(`DROP TABLE IF EXISTS ${ident(table)}`);
    db.prepare(`DELETE FROM _store_meta WHERE key = ?`).run(`counts:${table}`);
  }

  /** The statement reading a count, when the (cast) filter is exactly one value of each of the key's paths. */
  lookup(filter: Filter): { sql: string; params: (string | number)[] } | undefined {
    const keys = Object.keys(filter);
    if (keys.length !== this.paths.length || !keys.every((k) => this.paths.includes(k))) return undefined;
    const params: (string | number)[] = [];
    for (const [i, path] of this.paths.entries()) {
      const values = pinnedValues(filter, path);
      if (values?.length !== 1 || values[0] === null) return undefined;
      const v = sqlValue(this.kinds[i], values[0]);
      if (v === undefined) return undefined;
      params.push(v);
    }
    return { sql: this.read, params };
  }
}
