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
  const type = schemaTypeAt(schema, path);
  return type ? leafKind(type) : undefined;
}

/** Whether a path names one embedded document per document (a single subdocument, a Map's value): an object or nothing. */
export function isSubdocumentPath(schema: mongoose.Schema, path: string): boolean {
  return schemaTypeAt(schema, path)?.instance === 'Embedded';
}

/**
 * The schema type a dotted path names, through nested objects, single subdocuments and Maps (whose
 * keys are any segment: `fields.<id>.number`), never through an array or Mixed; undefined otherwise.
 */
function schemaTypeAt(schema: mongoose.Schema, path: string): AnyType | undefined {
  const parts = path.split('.');
  if (parts.some((p) => p === '' || p.startsWith('$') || /^\d+$/.test(p))) return undefined;
  let current = schema;
  let start = 0;
  for (let k = 1; k <= parts.length; k++) {
    // nested objects are declared by their leaves ('profile.city'): a prefix without a type is one of them
    const type = current.path(parts.slice(start, k).join('.')) as AnyType | undefined;
    if (!type) continue;
    if (k === parts.length) return type;
    if (type.instance === 'Map') continue; // the next segment is a key: mongoose resolves `map.<key>` to the value's type
    if (type.instance !== 'Embedded' || !type.schema) return undefined; // an array, Mixed or a scalar with more path after it
    current = type.schema;
    start = k;
  }
  return undefined;
}

function leafKind(type: AnyType): PathKind | undefined {
  if (SCALARS[type.instance]) return SCALARS[type.instance];
  if (type.instance === 'Array' && !type.$isMongooseDocumentArray) {
    const element = (type.$embeddedSchemaType ?? type.caster)?.instance;
    if (element === 'String') return 'string[]';
    if (element === 'Number') return 'number[]';
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

/** `json_extract(doc, path)`: the raw value (NULL when missing or null; JSON text for objects). `base` is the JSON (a row's doc, an array element). */
export function rawExpr(path: string, base = 'doc'): string {
  return `json_extract(${base}, ${sqlString(jsonPath(path))})`;
}

/** The comparable key of a scalar path (see the file comment); `_id` is a column of its own. */
export function keyExpr(path: string, kind: ScalarKind | 'id', base = 'doc'): string {
  if (kind === 'id') return '_id';
  const json = kind === 'date' ? `${jsonPath(path)}."$date"` : jsonPath(path);
  return `ifnull(json_extract(${base}, ${sqlString(json)}), ${NULL_KEY})`;
}

/**
 * A path into a document array (`optOuts.at`, `orders.sourceId`), or the array itself: its path, the
 * path inside its elements, and the elements' schema. undefined for anything else.
 */
export function documentArrayOf(schema: mongoose.Schema, path: string): { array: string; rest: string; schema: mongoose.Schema } | undefined {
  const parts = path.split('.');
  for (let k = 1; k <= parts.length; k++) {
    const type = schema.path(parts.slice(0, k).join('.')) as AnyType | undefined;
    if (!type) continue;
    if (!type.$isMongooseDocumentArray || !type.schema) return undefined;
    return { array: parts.slice(0, k).join('.'), rest: parts.slice(k).join('.'), schema: type.schema };
  }
  return undefined;
}

/** A SQL identifier. */
export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
