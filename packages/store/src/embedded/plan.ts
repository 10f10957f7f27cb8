/**
 * Choosing which committed documents a filter can possibly match (the embedded "query planner").
 * The result is only a superset: every candidate is still tested against the full filter.
 * Preference: `_id` lookups, then a unique index fully pinned by equalities (the sync path upserts
 * by `{ accountId, email }`; a partial one only when the pinned values pass its filter), then the account partition(s), else a full scan.
 */
import { equalityScalar, stringChoices } from '../filter';
import type { Filter } from '../types';
import type { Doc } from '../values';
import { CollectionData, PARTITION_FIELD } from './collection-data';

export interface Plan {
  sources: Iterable<Doc>[];
  /** Set when the filter is only an account condition and the sources are exactly its partitions: the count, without testing. */
  exactCount?: number;
  /**
   * Names the candidate set when it is a scan (account partitions, or everything): reads issued
   * together with the same key can share one pass over it (the store's shared scans).
   */
  scanKey?: string;
}

export function planCandidates(data: CollectionData, filter: Filter): Plan {
  const ids = stringChoices(filter._id);
  if (ids) {
    const docs: Doc[] = [];
    for (const id of new Set(ids)) {
      const doc = data.byId.get(id);
      if (doc) docs.push(doc);
    }
    return { sources: [docs] };
  }

  for (const index of data.uniques) {
    const spec = index.spec;
    const key = spec.fields.map((f) => equalityScalar(filter[f]));
    if (key.some((v) => v === undefined)) continue;
    if (!index.holdsEveryDocWith(key)) continue; // a partial index may not hold the documents the filter matches
    const owner = index.ownerOf(key);
    const doc = owner === undefined ? undefined : data.byId.get(owner);
    return { sources: [doc ? [doc] : []] };
  }

  const accounts = stringChoices(filter[PARTITION_FIELD]);
  if (accounts) {
    const sources: Iterable<Doc>[] = [];
    let count = 0;
    for (const account of new Set(accounts)) {
      const part = data.partitions.get(account);
      if (part) {
        sources.push(part.values());
        count += part.size;
      }
    }
    // documents with a non-string accountId (say, an array) may still match: scan them too
    if (data.unpartitioned.size > 0) sources.push(data.unpartitioned.values());
    const exact = Object.keys(filter).length === 1 && data.unpartitioned.size === 0;
    return { sources, exactCount: exact ? count : undefined, scanKey: `accounts:${JSON.stringify([...new Set(accounts)].sort())}` };
  }

  return { sources: [data.byId.values()], exactCount: Object.keys(filter).length === 0 ? data.byId.size : undefined, scanKey: 'all' };
}
