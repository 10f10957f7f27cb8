/**
 * Key columns: the values a collection's indexes are built on, kept in columns of its table beside
 * `doc`, so that an update rewrites only the index entries whose keys it changes.
 *
 * An index on an expression of `doc` depends on the whole document: SQLite cannot tell which
 * expressions an update changes, so every update of `doc` deleted and re-inserted the row's entry
 * in every such index (a message record has a dozen: ~75 µs of a ~80 µs UPDATE). Indexes are on
 * these columns instead. An insert computes every column from the JSON it stores; an update sets
 * `doc` and only the columns whose paths hold another value afterwards, and SQLite leaves every
 * index none of whose columns is set alone.
 *
 * - `key:<kind>:<path>`: the comparable key of a scalar path (`keyExpr` in paths.ts), for every
 *   path an index, a partial index's condition, a multikey index's prefix or a kept count names.
 * - `has:<path>`: whether a path is present (1 or 0), for the conditions of sparse indexes and the
 *   `$exists` of partial ones.
 * Filters, sorts, index conditions and the side tables' triggers read the columns in place of the
 * expressions (`key`, `has`), so SQLite's planner matches them to the indexes.
 *
 * When a collection is opened, the columns its table lacks are added and filled from the stored
 * documents (one transaction, once: an upgraded data directory, an index added to a schema), and
 * the ones no index needs any more are dropped.
 */
import mongoose from 'mongoose';
import type { CollectionOptions } from '../types';
import type { Doc } from '../values';
import { deepEqual } from '../values';
import type { Connection } from './connection';
import { countKeys } from './counts';
import { ident, jsonPath, keyExpr, pathKind, ScalarKind, sqlString } from './paths';

export interface KeyColumn {
  /** The column's name (`key:string:accountId`); `sql` is it quoted. */
  name: string;
  sql: string;
  /** The path whose value the column is computed from, and its segments. */
  path: string;
  parts: string[];
  /** The column's value computed from a document's JSON (a column name or a bound parameter). */
  expr(json: string): string;
}

const PREFIXES = ['key:', 'has:'];
const KINDS: ScalarKind[] = ['string', 'number', 'boolean', 'date'];

export class KeyColumns {
  readonly list: KeyColumn[] = [];
  private readonly keys = new Map<string, KeyColumn>();
  private readonly presence = new Map<string, KeyColumn>();
  private readonly updates = new Map<string, string>();
  private insert?: string;
  private readonly table: string;

  constructor(private readonly name: string) {
    this.table = ident(name);
  }

  /** Keeps the key of a scalar path in a column (once per path). */
  addKey(path: string, kind: ScalarKind): void {
    if (!this.keys.has(path)) this.keys.set(path, this.add(`key:${kind}:${path}`, path, (json) => keyExpr(path, kind, json)));
  }

  /** Keeps whether a path is present in a column (once per path). */
  addPresence(path: string): void {
    if (!this.presence.has(path)) this.presence.set(path, this.add(`has:${path}`, path, (json) => `(json_type(${json}, ${sqlString(jsonPath(path))}) IS NOT NULL)`));
  }

  private add(name: string, path: string, expr: (json: string) => string): KeyColumn {
    const column = { name, sql: ident(name), path, parts: path.split('.'), expr };
    this.list.push(column);
    return column;
  }

  /** The key column of a path, if it has one. */
  keyColumn(path: string): KeyColumn | undefined {
    return this.keys.get(path);
  }

  /**
   * The key of a path on the table's rows: its column when it has one, else computed from `doc`.
   * `row` qualifies the columns (a trigger's OLD or NEW, the table in a join).
   */
  key(path: string, kind: ScalarKind | 'id', row?: string): string {
    const of = (column: string) => (row ? `${row}.${column}` : column);
    if (kind === 'id') return of('_id');
    const column = this.keys.get(path);
    return column ? of(column.sql) : keyExpr(path, kind, of('doc'));
  }

  /** Whether a path is present, on the table's rows (1 or 0). */
  has(path: string): string {
    const column = this.presence.get(path);
    return column ? column.sql : `(json_type(doc, ${sqlString(jsonPath(path))}) IS NOT NULL)`;
  }

  /** Inserts a row: `?1` the _id, `?2` the document's JSON (stored as binary JSON); every column computed from it. */
  insertSql(): string {
    if (this.insert === undefined) {
      const columns = this.list.map((c) => `, ${c.sql}`).join('');
      const values = this.list.map((c) => `, ${c.expr('?2')}`).join('');
      this.insert = `INSERT INTO ${this.table} (_id, doc${columns}) VALUES (?1, jsonb(?2)${values})`;
    }
    return this.insert;
  }

  /** The columns whose paths hold another value in `after` than in `before` (an update sets those only). */
  changed(before: Doc, after: Doc): KeyColumn[] {
    return this.list.filter((c) => !deepEqual(valueAt(before, c.parts), valueAt(after, c.parts)));
  }

  /** Updates a row: `?1` the document's new JSON (stored as binary JSON), `?2` its _id; the `changed` columns computed from it. */
  updateSql(changed: KeyColumn[]): string {
    const signature = changed.map((c) => c.name).join('\n');
    let sql = this.updates.get(signature);
    if (sql === undefined) {
      sql = `UPDATE ${this.table} SET doc = jsonb(?1)${changed.map((c) => `, ${c.sql} = ${c.expr('?1')}`).join('')} WHERE _id = ?2`;
      this.updates.set(signature, sql);
    }
    return sql;
  }

  /**
   * Adds the columns the table lacks and fills them from its documents, in one transaction (a
   * savepoint: this may run inside the writer's transaction). Run before the indexes are created.
   */
  addMissing(db: Connection): void {
    const existing = new Set(this.existing(db));
    const missing = this.list.filter((c) => !existing.has(c.name));
    if (missing.length === 0) return;
    db.exec('SAVEPOINT key_columns');
    try {
      for (const c of missing) db.exec(`ALTER TABLE ${this.table} ADD COLUMN ${c.sql}`);
      db.exec(`UPDATE ${this.table} SET ${missing.map((c) => `${c.sql} = ${c.expr('doc')}`).join(', ')}`);
      db.exec('RELEASE key_columns');
    } catch (err) {
      db.exec('ROLLBACK TO key_columns');
      db.exec('RELEASE key_columns');
      throw err;
    }
  }

  /** Drops the key columns nothing needs any more. Run once no index or trigger reads them. */
  dropUnwanted(db: Connection): void {
    const wanted = new Set(this.list.map((c) => c.name));
    for (const name of this.existing(db)) if (!wanted.has(name)) db.exec(`ALTER TABLE ${this.table} DROP COLUMN ${ident(name)}`);
  }

  /**
   * The key columns an existing table has, read back from their names (`key:<kind>:<path>`,
   * `has:<path>`): for a write that knows no schema (legacy.ts importing old files into a table a
   * store already created), so that it fills them as an insert does.
   */
  static ofTable(db: Connection, name: string): KeyColumns {
    const keys = new KeyColumns(name);
    for (const column of keys.existing(db)) {
      const [prefix, ...rest] = column.split(':');
      if (prefix === 'has') keys.addPresence(rest.join(':'));
      else if (KINDS.includes(rest[0] as ScalarKind)) keys.addKey(rest.slice(1).join(':'), rest[0] as ScalarKind);
    }
    return keys;
  }

  private existing(db: Connection): string[] {
    const rows = db.prepare(`SELECT name FROM pragma_table_info(?)`).all(this.name) as { name: string }[];
    return rows.map((r) => r.name).filter((name) => PREFIXES.some((p) => name.startsWith(p)));
  }
}

/** The value at a path (getPath in values.ts, its segments split once). */
function valueAt(doc: unknown, parts: string[]): unknown {
  let v = doc as Record<string, unknown> | undefined;
  for (const part of parts) {
    if (v === null || typeof v !== 'object') return undefined;
    v = v[part] as Record<string, unknown> | undefined;
  }
  return v;
}

/**
 * The key columns of a collection: the scalar paths its indexes are built on (up to the first path
 * that is not one, as indexes.ts and multikey.ts read them), the paths their partial conditions
 * test, the presence of a sparse index's paths, and the paths of its kept counts.
 */
export function keyColumnsOf(collection: string, schema: mongoose.Schema, countBy?: CollectionOptions['countBy']): KeyColumns {
  const keys = new KeyColumns(collection);
  const scalar = (path: string) => {
    const kind = pathKind(schema, path);
    return kind === 'string' || kind === 'number' || kind === 'boolean' || kind === 'date' ? kind : undefined;
  };
  for (const [fields, options = {}] of schema.indexes() as [Record<string, unknown>, Record<string, unknown> | undefined][]) {
    for (const [path, dir] of Object.entries(fields)) {
      if (path === '_id') continue; // a column of its own
      const kind = scalar(path);
      if (kind === undefined || (dir !== 1 && dir !== -1)) break;
      keys.addKey(path, kind);
    }
    if (options.sparse) for (const path of Object.keys(fields)) keys.addPresence(path);
    const partial = options.partialFilterExpression as Record<string, unknown> | undefined;
    for (const [path, cond] of Object.entries(partial ?? {})) {
      const kind = scalar(path);
      if (kind) keys.addKey(path, kind);
      if (cond !== null && typeof cond === 'object' && '$exists' in cond) keys.addPresence(path);
    }
  }
  for (const path of countBy === undefined ? [] : countKeys(countBy).flat()) {
    const kind = scalar(path);
    if (kind) keys.addKey(path, kind);
  }
  return keys;
}
