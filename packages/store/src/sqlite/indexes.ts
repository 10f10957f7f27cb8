/**
 * The schema's index declarations (`schema.index(...)`, field-level `unique`/`index`) as SQLite
 * indexes on the key columns of keys.ts, kept in step with the schema at start-up like `syncIndexes` on
 * MongoDB: missing ones are created, changed ones rebuilt, undeclared ones dropped.
 *
 * - Fields are index columns while the schema types them as scalars. An index whose later fields are
 *   arrays or Mixed (a multikey index on MongoDB) keeps the columns before them, so the account
 *   prefix still narrows its queries; a unique index must be whole (its uniqueness would otherwise
 *   be a different rule), so one that is not is refused at start-up.
 * - `unique` is a UNIQUE index; null and missing keys are one value (MongoDB's rule).
 * - `sparse` and `partialFilterExpression` become the index's WHERE. SQLite uses such a partial index
 *   only for queries whose WHERE visibly implies it, so `impliedConditions` adds its condition to a
 *   query whose equalities satisfy it (a dedupe-key lookup by a non-empty key, say).
 */
import mongoose from 'mongoose';
import { compileFilter } from '../filter';
import { defaultIndexName } from '../schema';
import type { Filter } from '../types';
import { isPlainObject, setPath } from '../values';
import type { KeyColumns } from './keys';
import { ident } from './paths';
import { FilterTranslator, Params } from './translate';

export interface IndexDef {
  /** The SQLite index name: `<collection>.<MongoDB index name>`. */
  sqlName: string;
  /** The MongoDB index name (DuplicateKeyError reports it). */
  name: string;
  /** Every declared field (the key of a DuplicateKeyError). */
  fields: string[];
  unique: boolean;
  /** The partial/sparse condition, SQL, and the rule deciding whether a query implies it. */
  where?: string;
  implied?: (filter: Filter) => boolean;
  /** The key columns, SQL, and their names. */
  columns: string;
  columnNames: string[];
  sql: string;
}

export function indexDefs(collection: string, schema: mongoose.Schema, translator: FilterTranslator, keys: KeyColumns): IndexDef[] {
  const defs: IndexDef[] = [];
  for (const [fields, options = {}] of schema.indexes() as [Record<string, unknown>, Record<string, unknown> | undefined][]) {
    const name = (options.name as string | undefined) ?? defaultIndexName(fields);
    const paths = Object.keys(fields);
    const columns: string[] = [];
    const columnNames: string[] = [];
    for (const path of paths) {
      const kind = translator.kindOf(path);
      if (kind === undefined || kind === 'string[]' || kind === 'number[]') break;
      const dir = fields[path];
      if (dir !== 1 && dir !== -1) break; // text, hashed, 2dsphere: not an ordered key
      columns.push(`${keys.key(path, kind)}${dir === -1 ? ' DESC' : ''}`);
      columnNames.push(kind === 'id' ? '_id' : keys.keyColumn(path)!.name);
    }
    const unique = Boolean(options.unique);
    if (unique && columns.length < paths.length) {
      throw new Error(`@mailer/store: unique index ${name} of ${collection} names a path the embedded engine cannot index exactly (an array, Mixed or a subdocument array); declare it on scalar paths`);
    }
    if (columns.length === 0) continue;
    const conditions: string[] = [];
    const rules: ((filter: Filter) => boolean)[] = [];
    if (options.sparse) {
      conditions.push(`(${paths.map((p) => keys.has(p)).join(' OR ')})`);
      rules.push((filter) => paths.some((p) => pinnedValues(filter, p)?.every((v) => v !== null)));
    }
    const partial = options.partialFilterExpression as Filter | undefined;
    if (partial) {
      const cond = translator.translate(partial, new Params(true));
      if (!cond.exact || cond.sql === undefined) throw new Error(`@mailer/store: the partialFilterExpression of index ${name} of ${collection} cannot be written in SQL exactly`);
      conditions.push(`(${cond.sql})`);
      rules.push(impliesPartial(partial));
    }
    const where = conditions.length ? conditions.join(' AND ') : undefined;
    const sqlName = `${collection}.${name}`;
    const keyList = columns.join(', ');
    const sql = `CREATE ${unique ? 'UNIQUE ' : ''}INDEX ${ident(sqlName)} ON ${ident(collection)} (${keyList})${where ? ` WHERE ${where}` : ''}`;
    defs.push({ sqlName, name, fields: paths, unique, where, implied: rules.length ? (f) => rules.every((r) => r(f)) : undefined, columns: keyList, columnNames, sql });
  }
  // a non-unique index whose columns begin another one's (same condition) adds nothing but write cost
  const redundant = (d: IndexDef) => !d.unique && defs.some((o) => o !== d && o.where === d.where && (o.columns.startsWith(`${d.columns}, `) || (o.columns === d.columns && defs.indexOf(o) < defs.indexOf(d))));
  return defs.filter((d) => !redundant(d));
}

/**
 * The values a filter pins a top-level path to (`path: v`, `{ $eq: v }`, `{ $in: [...] }`), if it does.
 * Values are what the filter names (scalars and Dates; anything else is not a pin).
 */
export function pinnedValues(filter: Filter, path: string): unknown[] | undefined {
  if (!Object.prototype.hasOwnProperty.call(filter, path)) return undefined;
  const cond = filter[path];
  const scalar = (v: unknown) => v === null || ['string', 'number', 'boolean'].includes(typeof v) || v instanceof Date;
  if (scalar(cond)) return [cond];
  if (isPlainObject(cond)) {
    const keys = Object.keys(cond);
    if (keys.length === 1 && keys[0] === '$eq' && scalar(cond.$eq)) return [cond.$eq];
    if (keys.length === 1 && keys[0] === '$in' && Array.isArray(cond.$in) && cond.$in.length > 0 && cond.$in.every(scalar)) return cond.$in;
  }
  return undefined;
}

/** Whether a filter's pinned values all pass a partial filter over the same paths (each path tested alone). */
function impliesPartial(partial: Filter): (filter: Filter) => boolean {
  const tests = Object.keys(partial).map((path) => ({ path, test: path.startsWith('$') ? undefined : compileFilter({ [path]: partial[path] }) }));
  return (filter) =>
    tests.every(({ path, test }) => {
      const values = test && pinnedValues(filter, path);
      if (!values) return false;
      return values.every((v) => {
        const doc: Record<string, any> = { _id: '' };
        setPath(doc, path, v);
        return test!(doc as any);
      });
    });
}
