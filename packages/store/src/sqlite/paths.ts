/**
 * What the schema says about a query path, in SQL terms (pure). Documents are stored as JSON text
 * (Dates as `{"$date": ms}`, see codec.ts); a path the schema types as a scalar (String, Number,
 * Boolean, Date, through plain nested objects or single subdocuments only) has one value per
 * document, so it can be an index column and be compared in SQL. Arrays of strings or numbers are
 * compared in SQL through json_each. Anything else (Mixed, document arrays, paths crossing an
 * array, ObjectIds, Buffers) is left to the JavaScript filter.
 *
 * The key of a scalar path is `ifnull(json_extract(doc, path), -Inf)`: missing and null become
 * -Infinity (no stored JSON value can be one), so that, as in MongoDB, null sorts before every
 * number, equals itself in unique indexes (SQLite's NULLs are all distinct) and is matched with `=`,
 * which an index serves. A Date path's key is the time in milliseconds (`$.path."$date"`).
 */
import mongoose from 'mongoose';

export type ScalarKind = 'string' | 'number' | 'boolean' | 'date';
export type PathKind = ScalarKind | 'id' | 'string[]' | 'number[]';

/** The SQL literal of a missing/null key. */
export const NULL_KEY = '-9e999';

const SCALARS: Record<string, ScalarKind> = { String: 'string', Number: 'number', Boolean: 'boolean', Date: 'date' };

type AnyType = mongoose.SchemaType & { schema?: mongoose.Schema; caster?: { instance?: string }; $embeddedSchemaType?: { instance?: string }; $isMongooseDocumentArray?: boolean };

/** The kind of a dotted path in a schema, or undefined when SQL cannot compare it exactly. */
export function pathKind(schema: mongoose.Schema, path: string): PathKind | undefined {
  if (path === '_id') return 'id';
  const parts = path.split('.');
  if (parts.some((p) => p === '' || p.startsWith('$') || /^\d+$/.test(p))) return undefined;
  let current = schema;
  let i = 0;
  while (i < parts.length) {
    // the longest declared path from here (nested objects are declared by their leaves: 'profile.city')
    let type: AnyType | undefined;
    let j = parts.length;
    for (; j > i; j--) {
      type = current.path(parts.slice(i, j).join('.')) as AnyType | undefined;
      if (type) break;
    }
    if (!type) return undefined;
    // mongoose also resolves paths inside document arrays ('items.sku'): those cross an array
    for (let k = i + 1; k < j; k++) if (current.path(parts.slice(i, k).join('.'))) return undefined;
    const last = j === parts.length;
    if (type.instance === 'Embedded' && type.schema && !last) {
      current = type.schema;
      i = j;
      continue;
    }
    if (!last) return undefined; // an array, Mixed or a leaf with more path after it
    if (SCALARS[type.instance]) return SCALARS[type.instance];
    if (type.instance === 'Array' && !type.$isMongooseDocumentArray) {
      const element = (type.$embeddedSchemaType ?? type.caster)?.instance;
      if (element === 'String') return 'string[]';
      if (element === 'Number') return 'number[]';
    }
    return undefined;
  }
  return undefined;
}

/** A SQLite JSON path for a dotted path, every segment quoted: `$."profile"."city"`. */
export function jsonPath(path: string): string {
  return '$' + path.split('.').map((p) => `."${p.replace(/"/g, '""')}"`).join('');
}

/** A SQL string literal. */
export function sqlString(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/** `json_extract(doc, path)`: the raw value (NULL when missing or null; JSON text for objects). */
export function rawExpr(path: string): string {
  return `json_extract(doc, ${sqlString(jsonPath(path))})`;
}

/** The comparable key of a scalar path (see the file comment); `_id` is a column of its own. */
export function keyExpr(path: string, kind: ScalarKind | 'id'): string {
  if (kind === 'id') return '_id';
  const json = kind === 'date' ? `${jsonPath(path)}."$date"` : jsonPath(path);
  return `ifnull(json_extract(doc, ${sqlString(json)}), ${NULL_KEY})`;
}

/** A SQL identifier. */
export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
