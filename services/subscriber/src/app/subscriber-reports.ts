// Use case CountSubscribers (POST /reports/subscribers, the API contract "Reports"): the account's subscribers
// per bucket, each metric counted by its own time. The gateway made the buckets from the report
// period (@mailer/reports); here they are only instants.
import { invalid } from '@mailer/kit';
import { checkBoundaries, MAX_REPORT_POINTS } from '@mailer/reports';
import type { SubscriberReportField } from '../store/subscribers';
import type { Deps } from './deps';

/** Each metric of the subscriber report and the subscriber time it is counted by. */
export const SUBSCRIBER_REPORT_METRICS = {
  newSubscribers: 'registeredAt',
  confirmed: 'confirmedAt',
  unsubscribed: 'unsubscribedAt',
} as const satisfies Record<string, SubscriberReportField>;

export type SubscriberMetric = keyof typeof SUBSCRIBER_REPORT_METRICS;
export type SubscriberCounts = Record<SubscriberMetric, number>;

/** One aggregate per metric, run together: each a range scan of its {accountId, <time>} index. */
export async function countSubscribers(deps: Pick<Deps, 'subscribers'>, input: { accountId: string; boundaries: Date[] }): Promise<SubscriberCounts[]> {
  const problem = checkBoundaries(input.boundaries, MAX_REPORT_POINTS);
  if (problem) throw invalid('validation_failed', `Invalid report buckets: ${problem}.`, [{ path: 'boundaries', problem }]);
  const metrics = Object.entries(SUBSCRIBER_REPORT_METRICS) as Array<[SubscriberMetric, SubscriberReportField]>;
  const perMetric = await Promise.all(metrics.map(([, field]) => deps.subscribers.countPerBucket(input.accountId, field, input.boundaries)));
  return input.boundaries.slice(1).map((_end, i) => Object.fromEntries(metrics.map(([metric], m) => [metric, perMetric[m][i]])) as SubscriberCounts);
}
