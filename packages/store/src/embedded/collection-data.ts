/**
 * The committed documents of one embedded collection and their in-memory indexes.
 *
 * - `byId`: every document by `_id`.
 * - `partitions`: documents by `accountId`. Every service query filters by accountId first, so a
 *   query pinned to one account scans that account only. Documents whose accountId is not a string
 *   (or is missing) live in `unpartitioned`, which such queries also scan, so the shortcut never
 *   changes results.
 * - unique indexes from the schema.
 *
 * Mutated only by `replay` (start-up) and by the store's commit step; never by readers.
 */
import { DuplicateKeyError } from '../errors';
import type { UniqueIndexSpec } from '../schema';
import type { Doc } from '../values';
import { UniqueIndex } from './unique-index';

export const PARTITION_FIELD = 'accountId';

export class CollectionData {
  readonly byId = new Map<string, Doc>();
  readonly partitions = new Map<string, Map<string, Doc>>();
  readonly unpartitioned = new Map<string, Doc>();
  uniques: UniqueIndex[] = [];

  constructor(readonly name: string) {}

  get size(): number {
    return this.byId.size;
  }

  private partitionOf(doc: Doc, create: boolean): Map<string, Doc> | undefined {
    const key = doc[PARTITION_FIELD];
    if (typeof key !== 'string') return this.unpartitioned;
    let part = this.partitions.get(key);
    if (!part && create) this.partitions.set(key, (part = new Map()));
    return part;
  }

  /**
   * Replaces (or with null deletes) a document in byId and partitions. Unique indexes are
   * maintained by the caller in two phases (all removals, then all additions) so that a
   * transaction moving a key from one document to another never sees a transient conflict.
   */
  setDocument(id: string, doc: Doc | null): void {
    const old = this.byId.get(id);
    if (old) {
      const oldPart = this.partitionOf(old, false);
      if (!doc || oldPart !== this.partitionOf(doc, false)) {
        oldPart?.delete(id);
        if (oldPart && oldPart !== this.unpartitioned && oldPart.size === 0) this.partitions.delete(old[PARTITION_FIELD]);
      }
    }
    if (doc) {
      this.byId.set(id, doc); // set() on an existing key keeps its position: natural order is stable across updates
      this.partitionOf(doc, true)!.set(id, doc);
    } else if (old) this.byId.delete(id);
  }

  unindexUnique(doc: Doc): void {
    for (const index of this.uniques) index.remove(doc);
  }

  indexUnique(doc: Doc): void {
    for (const index of this.uniques) index.add(doc);
  }

  /**
   * Builds the schema's unique indexes over the stored documents; like `syncIndexes` on MongoDB,
   * fails with DuplicateKeyError when existing data violates one.
   */
  defineUniqueIndexes(specs: UniqueIndexSpec[]): void {
    const indexes = specs.map((s) => new UniqueIndex(s));
    for (const index of indexes) {
      for (const doc of this.byId.values()) {
        for (const key of index.keysOf(doc)) {
          const owner = index.ownerOf(key);
          if (owner !== undefined && owner !== doc._id) throw new DuplicateKeyError(this.name, index.spec.name, index.keyObject(key));
        }
        index.add(doc);
      }
    }
    this.uniques = indexes;
  }
}
