/**
 * Documents as JSON text (pure): how the embedded engine stores them (one JSON document per row),
 * and the line format of the previous engine's journal and snapshot files, which it imports.
 *
 * JSON loses Dates, ObjectIds (mongoose gives array subdocuments ObjectId `_id`s by default) and
 * Buffers, so they are tagged as `{"$date": ms}` / `{"$oid": hex}` / `{"$binary": base64}`;
 * MongoDB field names cannot start with `$`, so the tags cannot collide with data. SQL reads a
 * Date's time as `json_extract(doc, '$.path."$date"')`.
 *
 * A legacy line is one atomic record: a JSON array of operations `[collection, _id, document | null]`
 * (null deleted the document), whole documents only, so replaying it is idempotent.
 */
import { Types } from 'mongoose';
import { Doc, isObjectId } from './values';

export type JournalOp = [collection: string, id: string, doc: Doc | null];

function replacer(this: any, key: string, value: unknown): unknown {
  const raw = this[key];
  if (raw instanceof Date) return { $date: raw.getTime() };
  if (isObjectId(raw)) return { $oid: raw.toHexString() };
  if (Buffer.isBuffer(raw)) return { $binary: raw.toString('base64') };
  return value;
}

function reviver(_key: string, value: any): unknown {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    if (value.$date !== undefined) return new Date(value.$date);
    if (value.$oid !== undefined) return new Types.ObjectId(value.$oid as string);
    if (value.$binary !== undefined) return Buffer.from(value.$binary as string, 'base64');
  }
  return value;
}

/**
 * `JSON.stringify(ops, replacer)`, written out for the values stored documents hold (a replacer
 * function costs a call per key and an extra lookup per value; this walk is ~2-3x faster). Anything
 * else (class instances, `toJSON` objects, BigInt, very deep values) goes to JSON.stringify itself,
 * so the output is always exactly what JSON.stringify would produce (test/codec.test.ts).
 */
export function encodeRecord(ops: JournalOp[]): string {
  try {
    return encodeValue(ops, 0)! + '\n';
  } catch (err) {
    if (err !== SLOW) throw err;
    return JSON.stringify(ops, replacer) + '\n';
  }
}

/** A document's JSON text (what a row stores). */
export function encodeDocument(doc: Doc): string {
  try {
    return encodeValue(doc, 0)!;
  } catch (err) {
    if (err !== SLOW) throw err;
    return JSON.stringify(doc, replacer);
  }
}

/** A stored row's document: JSON.parse, then the tagged values revived (only when the text has tags). */
export function decodeDocument(text: string): Doc {
  const doc = JSON.parse(text);
  return text.includes('{"$') ? (revive(doc) as Doc) : doc;
}

/** Replaces tagged objects by their values in place (a walk after JSON.parse is ~2x cheaper than a reviver). */
function revive(v: any): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (x !== null && typeof x === 'object') v[i] = revive(x);
    }
    return v;
  }
  const keys = objectKeys(v);
  if (keys.length === 1) {
    const k = keys[0];
    if (k === '$date') return new DateClass(v.$date);
    if (k === '$oid') return new Types.ObjectId(v.$oid as string);
    if (k === '$binary') return Buffer.from(v.$binary as string, 'base64');
  }
  for (const k of keys) {
    const x = v[k];
    if (x !== null && typeof x === 'object') v[k] = revive(x);
  }
  return v;
}

const SLOW = Symbol('codec.slow');
const MAX_DEPTH = 200;
const isArray = Array.isArray;
const getPrototypeOf = Object.getPrototypeOf;
const objectPrototype = Object.prototype;
const objectKeys = Object.keys;
const quote = JSON.stringify;
const isFinite = Number.isFinite;
const DateClass = Date;
const isBuffer = Buffer.isBuffer;

/** JSON text of a value; undefined where JSON.stringify omits it (undefined, functions, symbols). */
function encodeValue(v: unknown, depth: number): string | undefined {
  switch (typeof v) {
    case 'string':
      return quote(v);
    case 'number':
      return isFinite(v) ? '' + v : 'null';
    case 'boolean':
      return v ? 'true' : 'false';
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    case 'bigint':
      throw SLOW;
  }
  if (v === null) return 'null';
  if (depth > MAX_DEPTH) throw SLOW;
  if (isArray(v)) {
    if (typeof (v as { toJSON?: unknown }).toJSON === 'function') throw SLOW;
    let s = '[';
    for (let i = 0; i < v.length; i++) {
      const e = encodeValue(v[i], depth + 1);
      s += (i === 0 ? '' : ',') + (e === undefined ? 'null' : e);
    }
    return s + ']';
  }
  const proto = getPrototypeOf(v);
  if (proto === objectPrototype || proto === null) {
    const o = v as Record<string, unknown>;
    if (typeof o.toJSON === 'function' || o._bsontype !== undefined) throw SLOW;
    let s = '{';
    let first = true;
    for (const k of objectKeys(o)) {
      const e = encodeValue(o[k], depth + 1);
      if (e === undefined) continue;
      s += (first ? '' : ',') + quote(k) + ':' + e;
      first = false;
    }
    return s + '}';
  }
  if (v instanceof DateClass && proto === DateClass.prototype && !Object.prototype.hasOwnProperty.call(v, 'toJSON')) {
    const t = v.getTime();
    return '{"$date":' + (isFinite(t) ? '' + t : 'null') + '}';
  }
  if (isObjectId(v)) return '{"$oid":' + quote(v.toHexString()) + '}';
  if (isBuffer(v)) return '{"$binary":' + quote((v as Buffer).toString('base64')) + '}';
  throw SLOW;
}

/** Throws on a malformed line (the caller decides whether that is a torn tail or corruption). */
export function decodeRecord(line: string): JournalOp[] {
  // The reviver costs ~2x parse time; skip it for lines that cannot contain tags.
  const tagged = line.includes('"$date"') || line.includes('"$oid"') || line.includes('"$binary"');
  const ops = tagged ? JSON.parse(line, reviver) : JSON.parse(line);
  if (!Array.isArray(ops)) throw new Error('journal record is not an array');
  for (const op of ops) {
    if (!Array.isArray(op) || typeof op[0] !== 'string' || typeof op[1] !== 'string') {
      throw new Error('malformed journal operation');
    }
  }
  return ops as JournalOp[];
}
