/**
 * A unique index of the embedded engine: a tree of Maps, one level per indexed field, whose leaves
 * hold the owning `_id`. Nesting (rather than one Map keyed by a concatenated string) stores no new
 * key strings at all: the Maps reference the strings already held by the documents, which matters
 * at a million documents. Multikey (array) values produce one entry per element, and a missing
 * field is indexed as null unless the index is sparse, exactly as MongoDB does.
 */
import { compileFilter, Predicate } from '../filter';
import type { UniqueIndexSpec } from '../schema';
import { Doc, isObjectId, valuesAtPath } from '../values';

/** Map keys that compare like MongoDB index keys: null for missing, tagged strings for non-primitive values. */
function normalizePart(v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (v instanceof Date) return `\u0000date:${v.getTime()}`;
  if (isObjectId(v)) return `\u0000oid:${v.toHexString()}`;
  return `\u0000json:${JSON.stringify(v)}`;
}

export type IndexKey = unknown[]; // raw values, one per field

export class UniqueIndex {
  private readonly root = new Map<unknown, any>();
  private readonly partial?: Predicate;
  /** The partial filter names only indexed top-level fields: the key values alone decide it. */
  private readonly partialOnKeyFields: boolean;

  constructor(readonly spec: UniqueIndexSpec) {
    if (spec.partialFilterExpression) this.partial = compileFilter(spec.partialFilterExpression);
    const filterFields = Object.keys(spec.partialFilterExpression ?? {});
    this.partialOnKeyFields = filterFields.every((f) => spec.fields.includes(f) && !f.includes('.') && !f.startsWith('$'));
  }

  /**
   * True when the index holds every document whose indexed fields equal `key`, so a lookup by the
   * key is complete: always without a partial filter; with one, when it names only indexed fields
   * and those values pass it (a dedupe key `{ $gt: '' }` lookup by a non-empty key).
   */
  holdsEveryDocWith(key: IndexKey): boolean {
    if (!this.partial) return true;
    // null would also match documents without the field, which a partial index may leave out
    if (!this.partialOnKeyFields || key.some((v) => v === null) || this.spec.fields.some((f) => f.includes('.'))) return false;
    return this.partial(this.keyObject(key) as Doc);
  }

  /** The index entries of a document; none when a sparse or partial index skips it. */
  keysOf(doc: Doc): IndexKey[] {
    if (this.partial && !this.partial(doc)) return [];
    const perField = this.spec.fields.map((f) => valuesAtPath(doc, f));
    if (this.spec.sparse && perField.every((values) => values.every((v) => v === undefined))) return [];
    // cartesian product (MongoDB allows at most one array field per compound index, so this stays small)
    let keys: IndexKey[] = [[]];
    for (const values of perField) {
      const distinct = values.length === 1 ? values : dedupe(values);
      keys = keys.flatMap((prefix) => distinct.map((v) => [...prefix, v]));
    }
    return keys;
  }

  ownerOf(key: IndexKey): string | undefined {
    let node: any = this.root;
    for (const part of key) {
      node = node.get(normalizePart(part));
      if (node === undefined) return undefined;
    }
    return node as string;
  }

  add(doc: Doc): void {
    for (const key of this.keysOf(doc)) {
      let node = this.root;
      for (let i = 0; i < key.length - 1; i++) {
        const p = normalizePart(key[i]);
        let next = node.get(p);
        if (next === undefined) node.set(p, (next = new Map()));
        node = next;
      }
      node.set(normalizePart(key[key.length - 1]), doc._id);
    }
  }

  remove(doc: Doc): void {
    for (const key of this.keysOf(doc)) this.removeKey(this.root, key, 0, doc._id);
  }

  private removeKey(node: Map<unknown, any>, key: IndexKey, i: number, id: string): void {
    const p = normalizePart(key[i]);
    if (i === key.length - 1) {
      if (node.get(p) === id) node.delete(p);
      return;
    }
    const child = node.get(p);
    if (!child) return;
    this.removeKey(child, key, i + 1, id);
    if (child.size === 0) node.delete(p); // prune, so deleted tenants leave nothing behind
  }

  /** A stable string for a key, for the small per-transaction claim maps. */
  static serialize(key: IndexKey): string {
    return JSON.stringify(key.map(normalizePart));
  }

  /** `{ field: value }` for error messages. */
  keyObject(key: IndexKey): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.spec.fields.forEach((f, i) => (out[f] = key[i] ?? null));
    return out;
  }
}

function dedupe(values: unknown[]): unknown[] {
  const seen = new Set<unknown>();
  return values.filter((v) => {
    const k = normalizePart(v);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
