/**
 * The aggregation subset both adapters accept. Checked on mongo too, so that a pipeline that
 * works in production also works on the embedded engine (and vice versa).
 */
// $bucket: reports count per calendar bucket in the store (@mailer/reports bucketCountPipeline).
export const SUPPORTED_STAGES = ['$match', '$group', '$sort', '$skip', '$limit', '$project', '$unwind', '$count', '$facet', '$addFields', '$bucket'] as const;

const supported = new Set<string>(SUPPORTED_STAGES);

export function assertSupportedPipeline(pipeline: Record<string, unknown>[]): void {
  if (!Array.isArray(pipeline)) throw new Error('aggregate: pipeline must be an array of stages');
  for (const stage of pipeline) {
    const keys = stage && typeof stage === 'object' ? Object.keys(stage) : [];
    if (keys.length !== 1) throw new Error('aggregate: each stage must be an object with exactly one stage operator');
    const op = keys[0];
    if (!supported.has(op)) {
      throw new Error(`aggregate: stage ${op} is not supported (supported: ${SUPPORTED_STAGES.join(' ')})`);
    }
    if (op === '$facet') {
      for (const sub of Object.values(stage.$facet as Record<string, unknown>)) {
        assertSupportedPipeline(sub as Record<string, unknown>[]);
      }
    }
  }
}
