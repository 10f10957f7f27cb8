/**
 * The pending changes of one embedded write or transaction, invisible to readers until the store
 * commits them (all at once, synchronously). A failed operation or a rolled-back transaction just
 * drops its batch, so memory is never left half-updated.
 *
 * Writes inside a transaction see the transaction's own earlier writes through `candidates` and
 * `get`; unique checks consider committed documents as overridden by the batch (`claims` holds
 * the unique keys of the batch's own documents).
 */
import { DuplicateKeyError } from '../errors';
import type { Doc } from '../values';
import { CollectionData } from './collection-data';
import { UniqueIndex } from './unique-index';

export class WriteBatch {
  readonly changes = new Map<CollectionData, Map<string, Doc | null>>();
  private readonly claims = new Map<UniqueIndex, Map<string, string>>();

  get isEmpty(): boolean {
    for (const changes of this.changes.values()) if (changes.size > 0) return false;
    return true;
  }

  /** The current version of a document as this batch sees it. */
  get(data: CollectionData, id: string): Doc | undefined {
    const changes = this.changes.get(data);
    if (changes?.has(id)) return changes.get(id) ?? undefined;
    return data.byId.get(id);
  }

  /** Committed candidates with the batch's versions substituted, plus documents the batch created. */
  *candidates(data: CollectionData, committed: Iterable<Doc>[]): Iterable<Doc> {
    const changes = this.changes.get(data);
    if (!changes || changes.size === 0) {
      for (const source of committed) yield* source;
      return;
    }
    for (const source of committed) for (const doc of source) if (!changes.has(doc._id)) yield doc;
    for (const doc of changes.values()) if (doc) yield doc;
  }

  /** Throws DuplicateKeyError when storing `doc` would violate a unique index (including `_id` for inserts). */
  checkUnique(data: CollectionData, doc: Doc, isInsert: boolean): void {
    if (isInsert && this.get(data, doc._id)) throw new DuplicateKeyError(data.name, '_id_', { _id: doc._id });
    const changes = this.changes.get(data);
    for (const index of data.uniques) {
      const claimed = this.claims.get(index);
      for (const key of index.keysOf(doc)) {
        const claimant = claimed?.get(UniqueIndex.serialize(key));
        if (claimant !== undefined && claimant !== doc._id) throw new DuplicateKeyError(data.name, index.spec.name, index.keyObject(key));
        const owner = index.ownerOf(key);
        // a committed owner the batch has changed no longer holds the key unless the batch version claims it (checked above)
        if (owner !== undefined && owner !== doc._id && !changes?.has(owner)) {
          throw new DuplicateKeyError(data.name, index.spec.name, index.keyObject(key));
        }
      }
    }
  }

  /** Records a new version (or with null, the deletion) of a document; uniqueness must have been checked. */
  set(data: CollectionData, id: string, doc: Doc | null): void {
    let changes = this.changes.get(data);
    if (!changes) this.changes.set(data, (changes = new Map()));
    const previous = changes.get(id);
    if (previous) this.release(data, previous);
    changes.set(id, doc);
    if (doc) this.claim(data, doc);
  }

  private claim(data: CollectionData, doc: Doc): void {
    for (const index of data.uniques) {
      let claimed = this.claims.get(index);
      if (!claimed) this.claims.set(index, (claimed = new Map()));
      for (const key of index.keysOf(doc)) claimed.set(UniqueIndex.serialize(key), doc._id);
    }
  }

  private release(data: CollectionData, doc: Doc): void {
    for (const index of data.uniques) {
      const claimed = this.claims.get(index);
      if (!claimed) continue;
      for (const key of index.keysOf(doc)) {
        const k = UniqueIndex.serialize(key);
        if (claimed.get(k) === doc._id) claimed.delete(k);
      }
    }
  }
}
