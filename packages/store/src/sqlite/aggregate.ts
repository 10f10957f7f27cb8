/**
 * Aggregations of the embedded engine over batches of matching documents, so that a report over a
 * million records never holds them all (nor the event loop: the batches come from a sliced scan).
 *
 * The stages that look at one document at a time ($match, $project, $addFields, $unwind) run on each
 * batch. When the next stage reduces ($count, or a $group / $bucket whose accumulators are all
 * `$sum`), it runs on each batch too and the partial rows are merged (sums add up), so memory holds
 * one batch and one row per group. Any other pipeline keeps the per-document stages' output of every
 * batch (usually much smaller than the documents: reports project to one value) and runs the rest
 * over it at the end.
 */
import { Aggregator } from 'mingo';
import type { Doc } from '../values';

type Stage = Record<string, unknown>;
type Row = Record<string, any>;

const PER_DOCUMENT = new Set(['$match', '$project', '$addFields', '$unwind']);

/** How partial rows of a reducing stage combine: the key of a row, the fields that add up. */
interface Merge {
  sums: string[];
  /** $bucket: rows in the order of its boundaries (then the default), as MongoDB gives them. */
  order?: (row: Row) => number;
}

export async function aggregateBatches(batches: AsyncIterable<Doc[]>, pipeline: Stage[]): Promise<unknown[]> {
  let split = 0;
  while (split < pipeline.length && PER_DOCUMENT.has(Object.keys(pipeline[split])[0])) split++;
  const perDocument = pipeline.slice(0, split);
  const merge = split < pipeline.length ? mergeOf(pipeline[split]) : undefined;
  const head = merge ? pipeline.slice(0, split + 1) : perDocument;
  const rest = pipeline.slice(merge ? split + 1 : split);
  const run = (stages: Stage[], docs: unknown[]) => (stages.length ? new Aggregator(stages).run(docs) : docs) as Row[];

  const kept: Row[] = [];
  const groups = new Map<string, Row>();
  for await (const batch of batches) {
    const out = run(head, batch);
    if (!merge) {
      for (const d of out) kept.push(d);
      continue;
    }
    for (const row of out) {
      const key = keyOf(row._id);
      const seen = groups.get(key);
      if (!seen) groups.set(key, row);
      else for (const f of merge.sums) seen[f] = (seen[f] as number) + (row[f] as number);
    }
  }
  if (!merge) return run(rest, kept);
  let rows = [...groups.values()];
  if (merge.order) rows = rows.sort((a, b) => merge.order!(a) - merge.order!(b));
  return run(rest, rows);
}

/** How a stage's partial results merge, or undefined when they cannot (then it runs once at the end). */
function mergeOf(stage: Stage): Merge | undefined {
  const [op] = Object.keys(stage);
  const spec = stage[op];
  if (op === '$count') return typeof spec === 'string' ? { sums: [spec] } : undefined;
  if (op === '$group') {
    const { _id, ...accumulators } = spec as Row;
    void _id;
    return sumsOnly(accumulators);
  }
  if (op === '$bucket') {
    const { boundaries, output } = spec as { boundaries: unknown[]; output?: Row };
    const merge = sumsOnly(output ?? { count: { $sum: 1 } });
    if (!merge) return undefined;
    const index = new Map(boundaries.map((b, i) => [keyOf(b), i]));
    return { ...merge, order: (row) => index.get(keyOf(row._id)) ?? boundaries.length };
  }
  return undefined;
}

function sumsOnly(accumulators: Row): Merge | undefined {
  const sums: string[] = [];
  for (const [field, acc] of Object.entries(accumulators)) {
    if (!acc || typeof acc !== 'object' || Object.keys(acc).length !== 1 || !('$sum' in acc)) return undefined;
    sums.push(field);
  }
  return { sums };
}

/** A group key as text: equal keys (dates by their time) give equal text, values of other types differ. */
function keyOf(value: unknown): string {
  return JSON.stringify(value, function (this: Record<string, unknown>, k: string, v: unknown) {
    const raw = this[k];
    if (raw instanceof Date) return { $date: raw.getTime() };
    if (typeof raw === 'number' && !Number.isFinite(raw)) return { $number: String(raw) };
    return v;
  }) ?? 'undefined';
}
