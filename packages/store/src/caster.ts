/**
 * A compiled per-schema caster for the embedded engine's write path: builds the same plain document
 * as `new Model(input, null, { defaults })` + `validateSync()` + toPlain (schema.ts), without
 * building a mongoose Document (which was ~14% of the messaging process's CPU).
 *
 * It only takes the shapes it understands and that cast without conversion; everything else goes
 * to mongoose, which stays the reference:
 * - schemas: strict, one level of nested paths (without defaults below them), path types String,
 *   Number, Boolean, Date, Mixed and arrays of those, options limited to type/required/default/
 *   enum/index/unique/sparse (no setters, no custom validators, no min/max/match/trim...).
 *   A schema with anything else is not compiled at all (`compileCaster` returns undefined).
 * - documents: every key a known path; values already of the path's type (no '5' -> 5, no
 *   string -> Date); every required path present and non-empty; every enum value listed.
 *   Otherwise `cast` returns FALLBACK and the caller runs mongoose, so errors (messages, paths,
 *   which paths are reported) and unusual casts are mongoose's own.
 *
 * Key order follows mongoose's: top-level keys in schema order, except function defaults applied
 * after the input's values (an empty-object Mixed default) which are appended; nested keys in
 * schema order. test/caster.test.ts compares both on many documents, and STORE_VERIFY_CASTER=1
 * makes every write cast both ways and throw on any difference (used to run the service suites).
 */
import mongoose from 'mongoose';
import { isPlainObject } from './values';

export const FALLBACK = Symbol('caster.fallback');

type Kind = 'String' | 'Number' | 'Boolean' | 'Date' | 'Mixed';

interface LeafSpec {
  key: string;
  kind: Kind;
  array: boolean;
  required: boolean;
  enumValues?: Set<string>;
  /** Default applied before the input's values (non-function defaults, arrays' implicit []). */
  before?: () => unknown;
  /** Default applied after the input's values, appended when the key was not there (a `{}` Mixed default). */
  after?: () => unknown;
}

interface NestedSpec {
  key: string;
  nested: true;
  /** Sub-paths in schema order. */
  children: LeafSpec[];
  childByKey: Map<string, LeafSpec>;
}

type TopSpec = LeafSpec | NestedSpec;

const ALLOWED_OPTIONS = new Set(['type', 'required', 'default', 'enum', 'index', 'unique', 'sparse']);
const MIXED_EMPTY_OBJECT_DEFAULT = /^function\s*\(\)\s*\{\s*return \{\};?\s*\}$/;
const KINDS = new Set<string>(['String', 'Number', 'Boolean', 'Date', 'Mixed']);
const isArray = Array.isArray;
const DateClass = Date;
const hasOwn = Object.prototype.hasOwnProperty;

class NotCompilable extends Error {}

function leafOf(key: string, type: any): LeafSpec {
  const options = type.options ?? {};
  for (const k of Object.keys(options)) if (!ALLOWED_OPTIONS.has(k)) throw new NotCompilable(`option ${k}`);
  if ((type.setters?.length ?? 0) > 0) throw new NotCompilable('setters');
  let kind: string = type.instance;
  let array = false;
  if (kind === 'Array') {
    if (type.$isMongooseDocumentArray) throw new NotCompilable('document array');
    const el = type.$embeddedSchemaType ?? type.caster;
    if (!el || !KINDS.has(el.instance)) throw new NotCompilable(`array of ${el?.instance}`);
    if ((el.setters?.length ?? 0) > 0 || (el.validators?.length ?? 0) > 0) throw new NotCompilable('array element options');
    for (const k of Object.keys(el.options ?? {})) if (k !== 'type') throw new NotCompilable(`array element option ${k}`);
    kind = el.instance;
    array = true;
  }
  if (!KINDS.has(kind)) throw new NotCompilable(`type ${kind}`);
  const spec: LeafSpec = { key, kind: kind as Kind, array, required: false };
  for (const v of type.validators ?? []) {
    if (v.type === 'required') {
      if (options.required !== true || array || kind === 'Mixed') throw new NotCompilable('required form');
      spec.required = true;
    } else if (v.type === 'enum') {
      if (kind !== 'String' || array || !isArray(type.enumValues)) throw new NotCompilable('enum form');
      spec.enumValues = new Set(type.enumValues);
    } else throw new NotCompilable(`validator ${v.type}`);
  }
  if (options.required !== undefined && options.required !== true && options.required !== false) throw new NotCompilable('required form');

  const def = type.defaultValue;
  if (def === null) spec.before = () => null;
  else if (typeof def === 'function') {
    if (array && def.$runBeforeSetters === true) {
      const raw = options.default;
      if (raw !== undefined && (typeof raw === 'function' || raw === null)) throw new NotCompilable('array default');
      spec.before = () => (raw != null ? [].concat(raw) : []);
    } else if (!array && kind === 'Mixed' && MIXED_EMPTY_OBJECT_DEFAULT.test(String(def))) {
      spec.after = () => ({}); // mongoose's own wrapper of a `{}` default (schema/mixed.js)
    } else if (!array && kind === 'Mixed' && def === Array) {
      spec.after = () => []; // mongoose's own replacement of a `[]` default
    } else throw new NotCompilable('function default');
  } else if (def !== undefined) {
    if (typeof def === 'object' && !(def instanceof DateClass) && !isPlainObject(def) && !isArray(def)) throw new NotCompilable('default value');
    spec.before = () => def; // copied by the cast (toPlain semantics)
  }
  return spec;
}

export interface CompiledCaster {
  /** The cast plain document (sharing nothing with `input`), or FALLBACK when mongoose must decide. */
  cast(input: Record<string, unknown>, defaults: boolean): Record<string, unknown> | typeof FALLBACK;
}

/** Returns undefined when the schema has anything this caster does not handle. */
export function compileCaster(schema: mongoose.Schema): CompiledCaster | undefined {
  try {
    return compile(schema);
  } catch (err) {
    if (err instanceof NotCompilable) {
      if (process.env.STORE_CASTER_DEBUG === '1') console.error(`@mailer/store caster: schema not compiled (${err.message})`);
      return undefined;
    }
    throw err;
  }
}

function compile(schema: mongoose.Schema): CompiledCaster {
  const s = schema as any;
  if (s.options.strict !== true) throw new NotCompilable('strict');
  if (s.discriminators && Object.keys(s.discriminators).length) throw new NotCompilable('discriminators');
  // (subpaths only hold the element types of arrays, checked with their array path)
  if (Object.keys(s.singleNestedPaths ?? {}).length) throw new NotCompilable('subdocuments');
  const minimize = s.get('minimize') !== false;

  const byTop = new Map<string, TopSpec>();
  for (const [path, type] of Object.entries<any>(s.paths)) {
    if (path.includes('$*')) throw new NotCompilable('map');
    const parts = path.split('.');
    if (parts.length > 2) throw new NotCompilable('deep nesting');
    if (parts.length === 1) {
      if (byTop.has(path)) throw new NotCompilable('duplicate');
      byTop.set(path, leafOf(path, type));
      continue;
    }
    const [top, sub] = parts;
    let nested = byTop.get(top) as NestedSpec | undefined;
    if (!nested) byTop.set(top, (nested = { key: top, nested: true, children: [], childByKey: new Map() }));
    else if (!('nested' in nested)) throw new NotCompilable('path and nested');
    const leaf = leafOf(sub, type);
    if (leaf.before || leaf.after) throw new NotCompilable('nested default');
    nested.children.push(leaf);
    nested.childByKey.set(sub, leaf);
  }
  // keep mongoose's own view of each top-level path as the authority
  for (const [key, spec] of byTop) if (s.pathType(key) !== ('nested' in spec ? 'nested' : 'real')) throw new NotCompilable('path type');
  // mongoose orders top-level keys by schema.tree; it must agree with the paths' order here
  const treeOrder = Object.keys(s.tree).filter((k) => byTop.has(k));
  if (treeOrder.length !== byTop.size) throw new NotCompilable('tree');
  const tops = treeOrder.map((k) => byTop.get(k)!);
  const afterDefaults = [...byTop.values()].filter((t): t is LeafSpec => !('nested' in t) && t.after !== undefined);

  return {
    cast(input, defaults) {
      if (!isPlainObject(input)) return FALLBACK; // documents, class instances: mongoose
      // every input key must be a known top-level path (dotted keys, virtuals, unknown keys: mongoose)
      for (const key in input) if (!hasOwn.call(input, key) || !byTop.has(key)) return FALLBACK;
      const out: Record<string, unknown> = {};
      for (const spec of tops) {
        const present = hasOwn.call(input, spec.key);
        const raw = present ? input[spec.key] : undefined;
        if ('nested' in spec) {
          let value: unknown;
          if (raw === undefined) value = {};
          else if (raw === null) value = null;
          else if (isPlainObject(raw)) {
            const obj: Record<string, unknown> = {};
            for (const k in raw) if (!hasOwn.call(raw, k) || !spec.childByKey.has(k) || raw[k] === undefined) return FALLBACK;
            for (const child of spec.children) {
              const v = raw[child.key];
              if (v === undefined) {
                if (child.required) return FALLBACK;
                continue;
              }
              const c = castLeaf(child, v, minimize);
              if (c === FALLBACK) return FALLBACK;
              if (c !== undefined) obj[child.key] = c;
            }
            value = obj;
          } else return FALLBACK;
          if (value !== null) {
            for (const child of spec.children) if (child.required && (value as Record<string, unknown>)[child.key] === undefined) return FALLBACK;
            if (minimize && Object.keys(value as object).length === 0) continue;
          } else if (spec.children.some((c) => c.required)) return FALLBACK;
          out[spec.key] = value;
          continue;
        }
        let v = raw;
        if (v === undefined && defaults && spec.before) v = spec.before();
        if (v === undefined) {
          // a key present with undefined keeps its place for an after-default (mongoose assigns into it)
          if (present && defaults && spec.after) {
            const d = castLeaf(spec, spec.after(), minimize);
            if (d === FALLBACK) return FALLBACK;
            if (d !== undefined) out[spec.key] = d;
            continue;
          }
          if (spec.required) return FALLBACK;
          continue;
        }
        const c = castLeaf(spec, v, minimize);
        if (c === FALLBACK) return FALLBACK;
        if (c !== undefined) out[spec.key] = c;
      }
      if (defaults) {
        for (const spec of afterDefaults) {
          if (hasOwn.call(input, spec.key)) continue; // handled in place above
          const d = castLeaf(spec, spec.after!(), minimize);
          if (d === FALLBACK) return FALLBACK;
          if (d !== undefined) out[spec.key] = d;
        }
      }
      return out;
    },
  };
}

/** A leaf value cast and copied; undefined when it is dropped (minimized), FALLBACK when mongoose must decide. */
function castLeaf(spec: LeafSpec, v: unknown, minimize: boolean): unknown {
  if (v === null) return spec.required || spec.enumValues ? FALLBACK : null;
  if (spec.array) {
    if (!isArray(v)) return FALLBACK;
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) {
      const el = v[i];
      if (el === undefined) return FALLBACK;
      if (el === null) {
        out[i] = null;
        continue;
      }
      const c = castScalar(spec.kind, el, minimize);
      if (c === FALLBACK) return FALLBACK;
      out[i] = c === undefined ? {} : c; // an element emptied by minimizing stays an (empty) element
    }
    return out;
  }
  const c = castScalar(spec.kind, v, minimize);
  if (c === FALLBACK) return c;
  if (spec.required && (c === undefined || c === '')) return FALLBACK;
  if (spec.enumValues && !spec.enumValues.has(c as string)) return FALLBACK;
  return c;
}

function castScalar(kind: Kind, v: unknown, minimize: boolean): unknown {
  switch (kind) {
    case 'String':
      return typeof v === 'string' ? v : FALLBACK;
    case 'Number':
      return typeof v === 'number' && Number.isFinite(v) ? v : FALLBACK;
    case 'Boolean':
      return typeof v === 'boolean' ? v : FALLBACK;
    case 'Date':
      return v instanceof DateClass && !Number.isNaN(v.getTime()) ? new DateClass(v.getTime()) : FALLBACK;
    case 'Mixed':
      return plainCopy(v, minimize);
  }
}

/** toPlain (schema.ts) for Mixed values: plain objects, arrays, Dates, Buffers copied; empty objects dropped when minimizing. */
function plainCopy(value: unknown, minimize: boolean): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof DateClass) return new DateClass(value.getTime());
  if (isArray(value)) {
    const out = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const el = plainCopy(value[i], minimize);
      out[i] = el === undefined ? {} : el;
    }
    return out;
  }
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    let empty = true;
    for (const key of Object.keys(value)) {
      const v = plainCopy(value[key], minimize);
      if (v !== undefined) {
        out[key] = v;
        empty = false;
      }
    }
    return empty && minimize ? undefined : out;
  }
  if (Buffer.isBuffer(value)) return Buffer.from(value);
  const doc = value as { $__?: unknown; _doc?: unknown };
  if (doc.$__ != null && doc._doc != null) return plainCopy(doc._doc, minimize); // a mongoose document inside a Mixed value
  if (value instanceof Map) return plainCopy(Object.fromEntries(value), minimize);
  return value; // ObjectId, Decimal128: immutable
}
