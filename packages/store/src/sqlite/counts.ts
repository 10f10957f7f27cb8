/**
 * Kept counts (CollectionOptions.countBy): the number of documents per value of one scalar path, in a
 * side table `<collection>.counts (k, n)` kept by triggers on the collection's table, in the same
 * transaction as every write, and filled from the stored documents when it is created. SQLite
 * counts an index range row by row (about 60 ns a row: 60 ms for a million), so a list's total over
 * a large account would cost more than its page; a count whose filter is exactly `{ path: value }`
 * reads the kept number instead.
 */
import mongoose from 'mongoose';
import type { Filter } from '../types';
import type { Connection } from './connection';
import { pinnedValues } from './indexes';
import type { KeyColumns } from './keys';
import { ident, pathKind, ScalarKind } from './paths';
import { sqlValue } from './translate';

export class KeptCounts {
  private readonly table: string;
  private readonly kind: ScalarKind;
  private readonly ddl: string[];
  private readonly fill: string;

  constructor(
    collection: string,
    schema: mongoose.Schema,
    readonly path: string,
    keys: KeyColumns,
  ) {
    const kind = pathKind(schema, path);
    if (kind === undefined || kind === 'id' || kind === 'string[]' || kind === 'number[]') {
      throw new Error(`@mailer/store: countBy of ${collection} must name a scalar path the schema types (String, Number, Boolean, Date), not ${path}`);
    }
    this.kind = kind;
    this.table = `${collection}.counts`;
    const t = ident(this.table);
    const coll = ident(collection);
    // the path's key column (keys.ts): an update that does not set it does not run the trigger
    const column = keys.keyColumn(path)!.sql;
    const add = (row: string, delta: number) => `INSERT INTO ${t} (k, n) VALUES (${row}.${column}, ${delta}) ON CONFLICT (k) DO UPDATE SET n = n + ${delta};`;
    this.ddl = [
      `CREATE TABLE ${t} (k PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID`,
      `CREATE TRIGGER ${ident(`${this.table}.insert`)} AFTER INSERT ON ${coll} BEGIN ${add('NEW', 1)} END`,
      `CREATE TRIGGER ${ident(`${this.table}.update`)} AFTER UPDATE OF ${column} ON ${coll} WHEN OLD.${column} IS NOT NEW.${column} BEGIN ${add('OLD', -1)} ${add('NEW', 1)} END`,
      `CREATE TRIGGER ${ident(`${this.table}.delete`)} AFTER DELETE ON ${coll} BEGIN ${add('OLD', -1)} END`,
    ];
    this.fill = `INSERT INTO ${t} (k, n) SELECT ${column}, count(*) FROM ${coll} GROUP BY 1`;
  }

  /**
   * Creates (and fills) the side table, or rebuilds it when its definition changed; when only the
   * triggers did (they read the key column since it exists), the counts they kept stay. Writer, at open.
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

  /** Drops a collection's side table that its options no longer declare (or only its triggers). */
  static drop(db: Connection, table: string, triggersOnly = false): void {
    for (const trigger of ['insert', 'update', 'delete']) db.exec(`DROP TRIGGER IF EXISTS ${ident(`${table}.${trigger}`)}`);
    if (triggersOnly) return;
    db.exec(`DROP TABLE IF EXISTS ${ident(table)}`);
    db.prepare(`DELETE FROM _store_meta WHERE key = ?`).run(`counts:${table}`);
  }

  /** The statement reading a count, when the (cast) filter is exactly one value of the path. */
  lookup(filter: Filter): { sql: string; params: (string | number)[] } | undefined {
    const keys = Object.keys(filter);
    if (keys.length !== 1 || keys[0] !== this.path) return undefined;
    const values = pinnedValues(filter, this.path);
    if (values?.length !== 1 || values[0] === null) return undefined;
    const v = sqlValue(this.kind, values[0]);
    return v === undefined ? undefined : { sql: `SELECT ifnull((SELECT n FROM ${ident(this.table)} WHERE k = ?), 0) AS n`, params: [v] };
  }
}
