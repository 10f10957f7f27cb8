/**
 * Pure helpers over stored values: dotted paths, deep copy, deep equality.
 * Stored documents only ever contain JSON-like values plus Date and ObjectId (the document codec
 * preserves exactly those), so the helpers only need to understand those shapes.
 */

export type Doc = Record<string, any> & { _id: string };

// Hot-path globals bound once: under a vm context (jest runs tests in one) every global lookup
// goes through an interceptor, which made the per-document loops up to 10x slower there.
const isArray = Array.isArray;
const DateClass = Date;
const getPrototypeOf = Object.getPrototypeOf;
const objectPrototype = Object.prototype;
const objectKeys = Object.keys;

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object') return false;
  const proto = getPrototypeOf(v);
  return proto === objectPrototype || proto === null;
}

/** BSON ObjectId from any copy of the bson package (mongoose's, the driver's). */
export function isObjectId(v: unknown): v is { toHexString(): string; _bsontype: 'ObjectId' } {
  return v !== null && typeof v === 'object' && (v as { _bsontype?: unknown })._bsontype === 'ObjectId';
}

/**
 * Segments that would make a path walk (getPath, setPath, an update) reach an object's prototype:
 * `$set: {'__proto__.x': 1}` would set `x` on Object.prototype for the whole process.
 */
const UNSAFE_SEGMENTS = new Set(['__proto__', 'constructor', 'prototype']);

/** Throws when a dotted path has a segment that reaches a prototype. */
export function checkPath(path: string): void {
  for (const part of path.split('.')) if (UNSAFE_SEGMENTS.has(part)) throw new Error(`unsafe path '${path}': '${part}' is not allowed as a path segment`);
}

/** checkPath on every key of a projection (or of one update operator's fields). */
export function checkPathKeys(fields: unknown): void {
  if (isPlainObject(fields)) for (const key of objectKeys(fields)) checkPath(key);
}

/** checkPath on the fields of each operator of an update ($rename's targets too), or the keys of a replacement-style one; other values are data. */
export function checkUpdatePaths(update: unknown): void {
  if (!isPlainObject(update)) return;
  for (const key of objectKeys(update)) {
    if (!key.startsWith('$')) checkPath(key);
    else if (isPlainObject(update[key])) for (const [path, to] of Object.entries(update[key])) checkPath(key === '$rename' ? `${path}.${to}` : path);
  }
}

/** checkPath on every key of a filter at any depth ($and/$or/$nor, $elemMatch, $not, sub-documents): its keys are paths or operators. */
export function checkFilterPaths(filter: unknown): void {
  if (!isPlainObject(filter)) return;
  for (const key of objectKeys(filter)) {
    checkPath(key);
    const value = filter[key];
    // Other arrays ($in, $all, ...) hold values, not filters: not walked (they may be long).
    if (isArray(value)) {
      if (key === '$and' || key === '$or' || key === '$nor') for (const sub of value) checkFilterPaths(sub);
    } else checkFilterPaths(value);
  }
}

/** Value at a dotted path without array traversal (numeric segments index arrays). */
export function getPath(doc: unknown, path: string): unknown {
  let v: any = doc;
  for (const part of path.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = v[part];
  }
  return v;
}

/** Sets a dotted path, creating intermediate objects. */
export function setPath(obj: Record<string, any>, path: string, value: unknown): void {
  const parts = path.split('.');
  let cur = obj;
  for (let i = 0; i < parts.length - 1; i++) {
    const next = cur[parts[i]];
    if (next === null || typeof next !== 'object') cur[parts[i]] = {};
    cur = cur[parts[i]];
  }
  cur[parts[parts.length - 1]] = value;
}

/**
 * All values a path designates the way MongoDB indexes and sorts them: arrays met on the way are
 * traversed element by element, and a leaf array contributes its elements. A missing path yields
 * `[undefined]` (indexes treat it as null), an empty leaf array too.
 */
export function valuesAtPath(doc: unknown, path: string): unknown[] {
  const out: unknown[] = [];
  collect(doc, path.split('.'), 0, out);
  return out.length ? out : [undefined];
}

function collect(value: unknown, parts: string[], i: number, out: unknown[]): void {
  if (i === parts.length) {
    if (isArray(value)) {
      for (const el of value) out.push(el);
      if (value.length === 0) out.push(undefined);
    } else out.push(value);
    return;
  }
  if (isArray(value)) {
    const part = parts[i];
    if (/^\d+$/.test(part)) collect(value[Number(part)], parts, i + 1, out);
    else for (const el of value) collect(el, parts, i, out);
    return;
  }
  if (value !== null && typeof value === 'object' && !(value instanceof DateClass)) {
    collect((value as Record<string, unknown>)[parts[i]], parts, i + 1, out);
    return;
  }
  out.push(undefined);
}

/**
 * Deep copy of a stored value. Callers get copies so they can never mutate stored state; this
 * hand-written walk is several times faster than structuredClone for small documents.
 * ObjectIds are immutable in practice and shared.
 */
export function cloneDeep<V>(v: V): V {
  if (v === null || typeof v !== 'object') return v;
  if (isArray(v)) {
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = cloneDeep(v[i]);
    return out as V;
  }
  if (v instanceof DateClass) return new Date(v.getTime()) as V;
  if (isPlainObject(v)) {
    const out: Record<string, unknown> = {};
    for (const k of objectKeys(v)) out[k] = cloneDeep(v[k]);
    return out as V;
  }
  if (Buffer.isBuffer(v)) return Buffer.from(v) as V;
  if (v instanceof RegExp) return new RegExp(v.source, v.flags) as V;
  return v; // ObjectId and other immutable values
}

/** Structural equality; object key order is ignored (casting may reorder keys, which is not a change). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'number') return Number.isNaN(a) && Number.isNaN(b);
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (isArray(a)) {
    if (!isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (isArray(b)) return false;
  if (a instanceof DateClass || b instanceof DateClass) {
    return a instanceof DateClass && b instanceof DateClass && a.getTime() === b.getTime();
  }
  if (isObjectId(a) || isObjectId(b)) {
    return isObjectId(a) && isObjectId(b) && a.toHexString() === b.toHexString();
  }
  if (a instanceof RegExp || b instanceof RegExp) return String(a) === String(b);
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false;
    if (!deepEqual((a as any)[k], (b as any)[k])) return false;
  }
  return true;
}

/** Deep copy of a query/update document before mongoose casts it in place (leaves Dates, RegExps and ids as they are). */
export function cloneQuery<V>(v: V): V {
  if (isArray(v)) return v.map(cloneQuery) as V;
  if (isPlainObject(v)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) out[k] = cloneQuery(v[k]);
    return out as V;
  }
  return v;
}
