/**
 * Reading what a mongoose schema says (document shape, validation, unique indexes, timestamps).
 * Mongoose schemas are the single definition; both adapters go through these helpers.
 */
import mongoose from 'mongoose';
import { compileCaster, CompiledCaster, FALLBACK } from './caster';
import { encodeRecord } from './codec';
import { DocumentValidationError, fromMongooseError } from './errors';
import { Doc, getPath, isPlainObject, setPath } from './values';
import type { CollectionOptions, Filter } from './types';

export interface UniqueIndexSpec {
  name: string;
  fields: string[];
  sparse: boolean;
  partialFilterExpression?: Filter;
}

/** MongoDB's default index name: `a_1_b_-1`. */
export function defaultIndexName(fields: Record<string, unknown>): string {
  return Object.entries(fields)
    .map(([k, v]) => `${k}_${v}`)
    .join('_');
}

/** Unique indexes declared on the schema, compound ones and field-level `unique: true` alike. */
export function uniqueIndexSpecs(schema: mongoose.Schema): UniqueIndexSpec[] {
  return schema
    .indexes()
    .filter(([, options]) => options?.unique)
    .map(([fields, options]) => ({
      name: (options?.name as string | undefined) ?? defaultIndexName(fields),
      fields: Object.keys(fields),
      sparse: Boolean(options?.sparse),
      partialFilterExpression: options?.partialFilterExpression as Filter | undefined,
    }));
}

/** Every store document has a caller-generated string `_id` (UUID); an ObjectId default would break the embedded maps and cross-adapter parity. */
export function assertStringId(collection: string, schema: mongoose.Schema): void {
  const idPath = schema.path('_id') as { instance?: string } | undefined;
  if (idPath?.instance !== 'String') {
    throw new Error(`@mailer/store: schema of collection "${collection}" must declare _id: String (got ${idPath?.instance ?? 'none'})`);
  }
}

/**
 * The schema a collection is opened with: the given one, plus a TTL index on the retention path
 * when the options declare one (`expireAfter`), so that one declaration is MongoDB's TTL index and
 * the embedded engine's index for its pruner. Checks the options.
 */
export function collectionSchema(collection: string, schema: mongoose.Schema, options: CollectionOptions = {}): mongoose.Schema {
  const expiry = options.expireAfter;
  if (!expiry) return schema;
  if (!(typeof expiry.days === 'number' && Number.isFinite(expiry.days) && expiry.days > 0)) throw new Error(`@mailer/store: expireAfter.days of ${collection} must be a positive number`);
  if ((schema.path(expiry.path) as { instance?: string } | undefined)?.instance !== 'Date') throw new Error(`@mailer/store: expireAfter.path of ${collection} must be a Date path of its schema, not ${expiry.path}`);
  if (schema.indexes().some(([fields]) => Object.keys(fields).length === 1 && fields[expiry.path] !== undefined)) {
    throw new Error(`@mailer/store: ${collection} declares an index on ${expiry.path} alone already; the retention index replaces it (remove it)`);
  }
  const clone = schema.clone();
  clone.index({ [expiry.path]: 1 }, { expireAfterSeconds: Math.round(expiry.days * 86_400) });
  return clone;
}

/** Whether two collection options declare the same (a collection is opened twice with the same ones). */
export function sameOptions(a: CollectionOptions = {}, b: CollectionOptions = {}): boolean {
  return JSON.stringify(a.countBy) === JSON.stringify(b.countBy) && a.expireAfter?.path === b.expireAfter?.path && a.expireAfter?.days === b.expireAfter?.days;
}

export interface TimestampPaths {
  createdAt?: string;
  updatedAt?: string;
}

export function timestampPaths(schema: mongoose.Schema): TimestampPaths {
  const ts = (schema as unknown as { $timestamps?: { createdAt?: string | null; updatedAt?: string | null } }).$timestamps;
  return { createdAt: ts?.createdAt ?? undefined, updatedAt: ts?.updatedAt ?? undefined };
}

function isMongooseDocument(v: object): v is { _doc: Record<string, unknown> } {
  return (v as { $__?: unknown }).$__ != null && (v as { _doc?: unknown })._doc != null;
}

/**
 * The plain data of a cast mongoose document, read from its internal `_doc`: what
 * `toObject({ depopulate, flattenMaps, minimize, versionKey: false, virtuals: false, getters: false })`
 * returns, written out because toObject keeps temporary objects alive long enough for V8 to
 * promote them (~2 KB of old-space garbage per insert, which pushed a 1,000,000-document load past
 * 1 GiB RSS), and is the most expensive step of an insert besides.
 * Everything is copied (Dates and Mixed values included): the stored document shares nothing
 * with the caller's input. Empty objects are dropped unless the schema says `minimize: false`,
 * as mongoose's save() does.
 */
function toPlain(value: unknown, minimize: boolean, root = false): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Date) return new Date(value.getTime());
  if (Array.isArray(value)) {
    const out = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const el = toPlain(value[i], minimize);
      out[i] = el === undefined ? {} : el; // an element emptied by minimizing stays an (empty) element
    }
    return out;
  }
  if (isMongooseDocument(value)) return toPlain(value._doc, minimize, root);
  if (value instanceof Map) return toPlain(Object.fromEntries(value), minimize, root);
  if (Buffer.isBuffer(value)) return Buffer.from(value);
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    let empty = true;
    for (const key of Object.keys(value)) {
      const v = toPlain(value[key], minimize);
      if (v !== undefined) {
        out[key] = v;
        empty = false;
      }
    }
    return empty && minimize && !root ? undefined : out;
  }
  return value; // ObjectId, Decimal128: immutable
}

/**
 * Casts and validates a whole document against its schema (without any connection), returning a
 * plain object. `isNew` applies defaults and creation timestamps, like an insert; updated
 * documents are re-validated whole with `isNew: false` (no defaults, like a MongoDB update).
 * Synchronous validators only (validateSync): async validators are not supported on the embedded engine.
 */
export function prepareDocument(
  model: mongoose.Model<any>,
  input: Record<string, unknown>,
  options: { isNew: boolean; collection: string; timestamps?: TimestampPaths; now?: Date },
): Doc {
  let source = input;
  if (options.isNew && (options.timestamps?.createdAt || options.timestamps?.updatedAt)) {
    const now = options.now ?? new Date();
    source = { ...input };
    const { createdAt, updatedAt } = options.timestamps;
    if (createdAt && getPath(source, createdAt) == null) setPath(source, createdAt, now);
    if (updatedAt && getPath(source, updatedAt) == null) setPath(source, updatedAt, now);
  }
  const caster = casterOf(model.schema);
  let out: Doc | undefined;
  if (caster) {
    const fast = caster.cast(source, options.isNew);
    if (fast !== FALLBACK) {
      out = fast as Doc;
      if (VERIFY) verifyCast(model, source, options, out);
    }
  }
  out ??= castWithMongoose(model, source, options);
  if (typeof out._id !== 'string' || out._id === '') {
    throw new DocumentValidationError([{ path: '_id', problem: 'Path `_id` is required and must be a non-empty string (callers generate UUIDs).' }], options.collection);
  }
  return out;
}

/** @internal The reference path: a mongoose Document, validateSync, toPlain (what the compiled caster must reproduce). */
export function castWithMongoose(model: mongoose.Model<any>, source: Record<string, unknown>, options: { isNew: boolean; collection: string }): Doc {
  const doc = new model(source, null, { defaults: options.isNew });
  const error = doc.validateSync();
  if (error) throw fromMongooseError(error, options.collection);
  return toPlain(doc._doc, model.schema.get('minimize') !== false, true) as Doc;
}

/** The compiled caster of each schema (null: not compilable, always mongoose). */
const casters = new WeakMap<mongoose.Schema, CompiledCaster | null>();

function casterOf(schema: mongoose.Schema): CompiledCaster | undefined {
  let caster = casters.get(schema);
  if (caster === undefined) casters.set(schema, (caster = DISABLED ? null : (compileCaster(schema) ?? null)));
  return caster ?? undefined;
}

/** STORE_CASTER=mongoose: always cast through mongoose documents. STORE_VERIFY_CASTER=1: cast both ways and throw on any difference (tests). */
const DISABLED = process.env.STORE_CASTER === 'mongoose';
const VERIFY = process.env.STORE_VERIFY_CASTER === '1';

function verifyCast(model: mongoose.Model<any>, source: Record<string, unknown>, options: { isNew: boolean; collection: string }, fast: Doc): void {
  let reference: Doc;
  try {
    reference = castWithMongoose(model, source, options);
  } catch (err) {
    throw new Error(`@mailer/store caster mismatch in ${options.collection}: mongoose refused what the caster accepted (${(err as Error).message})`);
  }
  const a = encodeRecord([[options.collection, '', fast]]);
  const b = encodeRecord([[options.collection, '', reference]]);
  if (a !== b) throw new Error(`@mailer/store caster mismatch in ${options.collection} (isNew ${options.isNew}):\n caster  ${a} mongoose ${b}`);
}
