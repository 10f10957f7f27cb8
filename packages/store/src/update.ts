/**
 * Applying MongoDB update documents to a copy of a stored document (pure).
 *
 * mingo is the reference implementation, but its updater rebuilds an operator context on every
 * call (~40 us, most of a sync upsert). The everyday shapes ($set/$unset/$inc/$push/$addToSet/
 * $pull of values, on paths through plain objects) are therefore applied directly; anything else
 * (positional operators, array filters, paths through arrays, $pull conditions, $min/$max/...)
 * goes to mingo. test/update.test.ts checks the direct path against mingo.
 */
import { update as mingoUpdate } from 'mingo';
import { cloneDeep, deepEqual, Doc, isPlainObject } from './values';
import type { Filter, Update } from './types';

/**
 * Normalizes an update the way mongoose does before sending it: keys without `$` are `$set`
 * (so `{ name: 'x' }` never replaces the document), and `$setOnInsert` only applies when the
 * update inserts (upsert). Returns the modifier mingo applies.
 */
export function normalizeUpdate(update: Update, isInsert: boolean): Record<string, any> {
  const modifier: Record<string, any> = {};
  const plain: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(update)) {
    if (!key.startsWith('$')) plain[key] = value;
    else if (key !== '$setOnInsert') modifier[key] = value;
  }
  const extraSets = [plain, isInsert ? (update.$setOnInsert as Record<string, unknown> | undefined) : undefined];
  for (const extra of extraSets) {
    if (!extra || Object.keys(extra).length === 0) continue;
    const set = (modifier.$set = { ...(modifier.$set ?? {}) });
    for (const [path, value] of Object.entries(extra)) {
      if (path in set) throw new Error(`Updating the path '${path}' would create a conflict at '${path}'`);
      set[path] = value;
    }
  }
  return modifier;
}

/** True when an update path uses the positional `$` operator, which needs the filter to know the matched element. */
function usesPositional(modifier: Record<string, any>): boolean {
  for (const fields of Object.values(modifier)) {
    if (fields && typeof fields === 'object') {
      for (const path of Object.keys(fields)) if (/(^|\.)\$(\.|$)/.test(path)) return true;
    }
  }
  return false;
}

/**
 * Returns `current` with `update` applied, as a new object (the stored document is never touched,
 * so a failing update or a rolled-back transaction leaves memory as it was). Throws on invalid
 * updates (unknown operator, conflicting paths) with mingo's messages.
 */
export function applyUpdate(current: Record<string, any>, update: Update, filter: Filter | undefined, isInsert: boolean): Doc {
  const modifier = normalizeUpdate(update, isInsert);
  const next = cloneDeep(current) as Doc;
  if (isInsert && modifier.$set && '_id' in modifier.$set) {
    // an upsert may name the new document's _id ($setOnInsert: { _id }); mingo, like MongoDB for
    // updates of existing documents, refuses to $set it
    const { _id, ...rest } = modifier.$set;
    next._id = cloneDeep(_id);
    if (Object.keys(rest).length) modifier.$set = rest;
    else delete modifier.$set;
  }
  if (Object.keys(modifier).length === 0) return next;
  const direct = applyDirect(next, modifier);
  if (direct) return direct;
  const viaMingo = cloneDeep(current) as Doc;
  if (next._id !== current._id) viaMingo._id = next._id;
  return applyWithMingo(viaMingo, modifier, filter);
}

function applyWithMingo(next: Doc, modifier: Record<string, any>, filter: Filter | undefined): Doc {
  const condition = filter && usesPositional(modifier) ? filter : undefined;
  // cloneMode 'deep': values coming from the caller's update are copied, never aliased
  mingoUpdate(next, modifier, undefined, condition, { cloneMode: 'deep' });
  return next;
}

const BAIL = Symbol('bail');
const DIRECT_OPS = new Set(['$set', '$unset', '$inc', '$push', '$addToSet', '$pull']);

/** The object holding a path's last segment, or BAIL when the path crosses anything but plain objects. */
function parentOf(doc: Record<string, any>, parts: string[], create: boolean): Record<string, any> | undefined | typeof BAIL {
  let cur = doc;
  for (let i = 0; i < parts.length - 1; i++) {
    let next = cur[parts[i]];
    if (next === undefined) {
      if (!create) return undefined;
      next = cur[parts[i]] = {};
    } else if (!isPlainObject(next)) return BAIL;
    cur = next;
  }
  return cur;
}

function isPlainValue(v: unknown): boolean {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v instanceof Date;
}

function sameValue(a: unknown, b: unknown): boolean {
  return a instanceof Date || b instanceof Date ? deepEqual(a, b) : a === b;
}

/** The values of a $push/$addToSet operand (`v` or `{ $each: [...] }`), or BAIL for modifiers mingo must handle ($slice, $sort, $position). */
function eachOf(v: unknown): unknown[] | typeof BAIL {
  if (isPlainObject(v) && Object.keys(v).some((k) => k.startsWith('$'))) {
    const keys = Object.keys(v);
    return keys.length === 1 && keys[0] === '$each' && Array.isArray(v.$each) ? v.$each : BAIL;
  }
  return [v];
}

/**
 * Applies the modifier to `doc` (a private copy, mutated in place) when every operator is on the
 * direct path; returns undefined (leaving `doc` possibly half-updated, to be discarded) otherwise.
 * Throws, like MongoDB and mingo, when two operators target overlapping paths.
 */
export function applyDirect(doc: Doc, modifier: Record<string, any>): Doc | undefined {
  const paths: string[] = [];
  for (const [op, fields] of Object.entries(modifier)) {
    if (!DIRECT_OPS.has(op) || !isPlainObject(fields)) return undefined;
    for (const path of Object.keys(fields)) {
      if (path === '' || path.split('.').some((p) => p === '' || p.startsWith('$'))) return undefined;
      paths.push(path);
    }
  }
  const sorted = [...paths].sort();
  for (let i = 1; i < sorted.length; i++) {
    const a = sorted[i - 1];
    const b = sorted[i];
    if (a === b || b.startsWith(a + '.')) throw new Error(`updating the path '${b}' would create a conflict at '${a}'`);
  }
  for (const path of paths) if (path === '_id' || path.startsWith('_id.')) return undefined; // mingo reports the immutable-field error

  for (const [op, fields] of Object.entries(modifier) as [string, Record<string, unknown>][]) {
    for (const [path, value] of Object.entries(fields)) {
      const parts = path.split('.');
      const key = parts[parts.length - 1];
      const parent = parentOf(doc, parts, op !== '$unset' && op !== '$pull');
      if (parent === BAIL) return undefined;
      switch (op) {
        case '$set':
          if (!(key in parent!) || !deepEqual(parent![key], value)) parent![key] = cloneDeep(value);
          break;
        case '$unset':
          if (parent && key in parent) delete parent[key];
          break;
        case '$inc': {
          const cur = parent![key];
          if (typeof value !== 'number' || (cur !== undefined && typeof cur !== 'number')) return undefined;
          parent![key] = cur === undefined ? value : cur + value;
          break;
        }
        case '$push':
        case '$addToSet': {
          const items = eachOf(value);
          const cur = parent![key];
          if (items === BAIL || (cur !== undefined && !Array.isArray(cur))) return undefined;
          const target: unknown[] = cur ?? (parent![key] = []);
          for (const item of items) {
            if (op === '$addToSet' && target.some((el) => deepEqual(el, item))) continue;
            target.push(cloneDeep(item));
          }
          break;
        }
        case '$pull': {
          if (!isPlainValue(value)) return undefined; // conditions: mingo
          const cur = parent?.[key];
          if (cur === undefined) break;
          if (!Array.isArray(cur)) return undefined;
          parent![key] = cur.filter((el) => !sameValue(el, value));
          break;
        }
      }
    }
  }
  return doc;
}
