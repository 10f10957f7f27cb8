/**
 * Reads of the embedded store: the documents matching a filter, and the shared pass that answers
 * the reads issued in one tick together (see SharedScans.scan).
 */
import { compileFilter, compileFilters } from '../filter';
import type { Filter } from '../types';
import { Doc, isObjectId } from '../values';
import { CollectionData } from './collection-data';
import { planCandidates } from './plan';
import { WriteBatch } from './write-batch';

export interface ScanResult {
  count: number;
  docs: Doc[];
}

interface ScanJob extends ScanResult {
  /** The cast filter (compiled again together with the pass's other filters, see runScan). */
  filter: Filter;
  filterKey: string;
  predicate: (doc: Doc) => boolean;
  collect: boolean;
  max: number;
  resolve(result: ScanResult): void;
  reject(err: unknown): void;
}

/** The reads of one collection waiting for the next shared pass, by candidate set. */
export class SharedScans {
  private readonly pending = new Map<string, { filter: Filter; jobs: ScanJob[] }>();

  constructor(private readonly data: CollectionData) {}

  /**
   * Shared scans: reads issued in the same tick (a segment preview's counts and first page, sent
   * together with Promise.all) over the same candidates (one account's partition) are answered by ONE
   * pass over the documents, each document tested by every read's predicate while it is in the CPU
   * cache (and once per distinct filter: a count and a page of the same filter share the test). Over
   * a million contacts with their orders the pass is bound by memory, not by the tests, so four
   * reads in one pass cost little more than one. Each read still sees the committed state of one
   * instant (the pass is synchronous), as it would alone; reads by _id or unique key run at once.
   */
  scan(filter: Filter, collect: boolean, max = Infinity): Promise<ScanResult> {
    const plan = planCandidates(this.data, filter);
    if (!collect && plan.exactCount !== undefined) return Promise.resolve({ count: plan.exactCount, docs: [] });
    const predicate = compileFilter(filter); // compile errors belong to this read alone
    const job: ScanJob = { filter, filterKey: filterKey(filter), predicate, collect, max, count: 0, docs: [], resolve: () => {}, reject: () => {} };
    const done = new Promise<ScanResult>((resolve, reject) => {
      job.resolve = resolve;
      job.reject = reject;
    });
    if (plan.scanKey === undefined) {
      runScan(plan.sources, [job]);
      return done;
    }
    let pending = this.pending.get(plan.scanKey);
    if (!pending) {
      const key = plan.scanKey;
      const jobs: ScanJob[] = [];
      pending = { filter, jobs };
      this.pending.set(key, pending);
      queueMicrotask(() => {
        this.pending.delete(key);
        // planned again now: the candidates as committed when the pass runs
        runScan(planCandidates(this.data, filter).sources, jobs);
      });
    }
    pending.jobs.push(job);
    return done;
  }
}

/**
 * Committed documents matching a filter (or with `batch`, as that batch sees them), in natural
 * order, stopping after `max`. A plain loop into an array: generators cost more per document
 * than the fast predicates themselves.
 */
export function matching(data: CollectionData, filter: Filter, batch?: WriteBatch, max = Infinity): Doc[] {
  const out: Doc[] = [];
  if (max <= 0) return out;
  const plan = planCandidates(data, filter);
  const predicate = compileFilter(filter);
  const sources = batch ? [batch.candidates(data, plan.sources)] : plan.sources;
  for (const source of sources) {
    for (const doc of source) {
      if (predicate(doc)) {
        out.push(doc);
        if (out.length >= max) return out;
      }
    }
  }
  return out;
}

/** A canonical key of a (cast) filter: reads with equal keys test each document once. */
function filterKey(filter: Filter): string {
  return JSON.stringify(filter, function (this: any, key: string, value: unknown) {
    const raw = this[key];
    if (raw instanceof Date) return { '\u0000date': raw.getTime() };
    if (raw instanceof RegExp) return { '\u0000regex': String(raw) };
    if (isObjectId(raw)) return { '\u0000oid': raw.toHexString() };
    return value;
  });
}

/** One synchronous pass over `sources` answering every job (see SharedScans.scan). */
function runScan(sources: Iterable<Doc>[], jobs: ScanJob[]): void {
  const groups = new Map<string, { filter: Filter; predicate: (doc: Doc) => boolean; jobs: ScanJob[]; open: boolean; error?: unknown }>();
  for (const job of jobs) {
    const g = groups.get(job.filterKey);
    if (g) g.jobs.push(job);
    else groups.set(job.filterKey, { filter: job.filter, predicate: job.predicate, jobs: [job], open: true });
  }
  const list = [...groups.values()];
  let open = list.length;
  // Several filters: compiled together, so what they have in common (a preview's TRUE filter inside
  // its UNKNOWN and reachable ones, its purchase tests inside the FALSE filter) is tested once per
  // document (compileFilters). Each job's own predicate already compiled: this cannot fail, but if
  // it did the pass would simply test each filter on its own.
  let reset = () => {};
  if (list.length > 1) {
    try {
      const shared = compileFilters(list.map((g) => g.filter));
      list.forEach((g, i) => (g.predicate = shared.predicates[i]));
      reset = shared.reset;
    } catch {
      // keep the separate predicates
    }
  }
  try {
    outer: for (const source of sources) {
      for (const doc of source) {
        for (let i = 0; i < list.length; i++) {
          const g = list[i];
          if (!g.open) continue;
          let hit: boolean;
          try {
            hit = g.predicate(doc);
          } catch (err) {
            g.error = err;
            g.open = false;
            if (--open === 0) break outer;
            continue;
          }
          if (!hit) continue;
          let full = true;
          for (const job of g.jobs) {
            if (!job.collect) {
              job.count++;
              full = false;
            } else if (job.docs.length < job.max) {
              job.docs.push(doc);
              job.count++;
              if (job.docs.length < job.max) full = false;
            }
          }
          // every read of this filter has what it asked for (a page without sort)
          if (full) {
            g.open = false;
            if (--open === 0) break outer;
          }
        }
      }
    }
  } catch (err) {
    for (const job of jobs) job.reject(err); // a source failed: nothing is answered
    return;
  } finally {
    reset(); // the memos must not keep the last document alive
  }
  for (const g of list) for (const job of g.jobs) (g.error === undefined ? job.resolve(job) : job.reject(g.error));
}
