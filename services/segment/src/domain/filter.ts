/**
 * A tiny algebra over MongoDB filter documents, with constants folded away so compiled segments stay
 * small and readable (`$and` with a never-matching part is never-matching, and so on).
 */

export type Filter = Record<string, unknown>;

/** Matches every document. */
export const ALWAYS: Filter = Object.freeze({}) as Filter;
/** Matches no document (every document has an _id); MongoDB answers an empty $in without scanning. */
export const NEVER: Filter = Object.freeze({ _id: Object.freeze({ $in: Object.freeze([]) }) }) as Filter;

const isAlways = (f: Filter) => f === ALWAYS || Object.keys(f).length === 0;
const isNever = (f: Filter) => f === NEVER;

export function and(...filters: Filter[]): Filter {
  const parts: Filter[] = [];
  for (const f of filters) {
    if (isNever(f)) return NEVER;
    if (isAlways(f)) continue;
    // Flatten nested $and (only when it is the sole key, so no sibling condition is lost).
    if (Object.keys(f).length === 1 && Array.isArray(f.$and)) parts.push(...(f.$and as Filter[]));
    else parts.push(f);
  }
  if (parts.length === 0) return ALWAYS;
  return parts.length === 1 ? parts[0] : { $and: parts };
}

export function or(...filters: Filter[]): Filter {
  const parts: Filter[] = [];
  for (const f of filters) {
    if (isAlways(f)) return ALWAYS;
    if (isNever(f)) continue;
    if (Object.keys(f).length === 1 && Array.isArray(f.$or)) parts.push(...(f.$or as Filter[]));
    else parts.push(f);
  }
  if (parts.length === 0) return NEVER;
  return parts.length === 1 ? parts[0] : { $or: parts };
}

/** Documents the filter does not match. */
export function not(filter: Filter): Filter {
  if (isAlways(filter)) return NEVER;
  if (isNever(filter)) return ALWAYS;
  const keys = Object.keys(filter);
  if (keys.length === 1 && Array.isArray(filter.$or)) return { $nor: filter.$or }; // not (a or b) = nor(a, b)
  if (keys.length === 1 && Array.isArray(filter.$nor) && filter.$nor.length === 1) return filter.$nor[0] as Filter; // double negation
  return { $nor: [filter] };
}

/**
 * A three-valued condition as two filters: T matches the documents where it is TRUE, F where it is
 * FALSE; a document matching neither is UNKNOWN. T and F never overlap.
 */
export interface FilterPair {
  T: Filter;
  F: Filter;
}

export const PAIR_TRUE: FilterPair = { T: ALWAYS, F: NEVER };
export const PAIR_FALSE: FilterPair = { T: NEVER, F: ALWAYS };

/** AND: TRUE when all are TRUE; FALSE when any is FALSE (FALSE beats UNKNOWN). */
export function andPair(pairs: FilterPair[]): FilterPair {
  return { T: and(...pairs.map((p) => p.T)), F: or(...pairs.map((p) => p.F)) };
}

/** OR: TRUE when any is TRUE (TRUE beats UNKNOWN); FALSE when all are FALSE. */
export function orPair(pairs: FilterPair[]): FilterPair {
  return { T: or(...pairs.map((p) => p.T)), F: and(...pairs.map((p) => p.F)) };
}

/** NOT swaps the two sides; UNKNOWN (neither side) stays UNKNOWN. */
export function notPair(pair: FilterPair): FilterPair {
  return { T: pair.F, F: pair.T };
}

/** A two-valued condition: FALSE exactly where it is not TRUE. */
export function knownPair(T: Filter): FilterPair {
  return { T, F: not(T) };
}
