// Counting stored records per bucket in the store itself (MongoDB, or the embedded engine, which
// accepts the same pipeline): one range $match on {accountId, <time field>} (an index on exactly
// that pair makes it an index range scan) and one $bucket over the boundaries, so at most one row
// per non-empty bucket leaves the store, whatever the number of records.

/** How the time field is stored: a BSON date (every service now) or an ISO 8601 UTC string (fixed width, as toISOString writes it). */
export type StoredTime = 'date' | 'isoString';

/**
 * The aggregation pipeline counting an account's records whose `field` lies in
 * [boundaries[0], boundaries[last]), grouped by bucket (read it with countsPerBucket).
 *
 * The buckets are taken over the time as epoch milliseconds with every boundary moved half a
 * millisecond earlier: no stored time equals a boundary then, so the result cannot depend on how an
 * engine places a value equal to a boundary (MongoDB puts it in the bucket it starts; the embedded
 * engine's $bucket, mingo 7, in the bucket before it).
 */
export function bucketCountPipeline(accountId: string, field: string, boundaries: ReadonlyArray<Date>, storedAs: StoredTime = 'date'): Record<string, unknown>[] {
  const edge = (d: Date) => (storedAs === 'date' ? d : d.toISOString());
  const millis = storedAs === 'date' ? { $toLong: `$${field}` } : { $toLong: { $toDate: `$${field}` } };
  return [
    { $match: { accountId, [field]: { $gte: edge(boundaries[0]), $lt: edge(boundaries[boundaries.length - 1]) } } },
    // only the time travels on (the embedded engine copies what reaches the next stages)
    { $project: { _id: 0, t: millis } },
    { $bucket: { groupBy: '$t', boundaries: boundaries.map((b) => +b - 0.5), output: { count: { $sum: 1 } } } },
  ];
}

/** The rows of bucketCountPipeline as one count per bucket (boundaries.length - 1 of them, zeros included). */
export function countsPerBucket(rows: ReadonlyArray<{ _id: unknown; count: unknown }>, boundaries: ReadonlyArray<Date>): number[] {
  const index = new Map(boundaries.map((b, i) => [+b - 0.5, i]));
  const counts = new Array<number>(Math.max(0, boundaries.length - 1)).fill(0);
  for (const row of rows) {
    const i = index.get(Number(row._id));
    if (i === undefined || i >= counts.length) throw new Error(`countsPerBucket: bucket ${String(row._id)} is not one of the boundaries`);
    counts[i] += Number(row.count); // MongoDB answers $sum as int32 or int64 (a Long with the driver's promoteLongs off)
  }
  return counts;
}
