// The bucket boundaries of a report request (POST /reports/*): UTC ISO 8601 instants made by the
// gateway from the report period (@mailer/reports); anything else is a caller bug, refused.
import { invalid } from '@mailer/kit';

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;

export function boundaryInstants(values: string[]): Date[] {
  return values.map((v, i) => {
    const d = new Date(v);
    if (!ISO_INSTANT.test(v) || Number.isNaN(+d)) throw invalid('validation_failed', `boundary ${i} is not a UTC ISO 8601 instant`, [{ path: `boundaries[${i}]`, problem: 'must be a UTC ISO 8601 instant' }]);
    return d;
  });
}
