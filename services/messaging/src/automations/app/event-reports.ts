// Use case CountEvents (POST /reports/events, the API contract "Reports"): the account's events per bucket by
// receipt time, in all and per event key. The gateway made the buckets from the report period
// (@mailer/reports); here they are only instants.
import { invalid, semaphore } from '@mailer/kit';
import { checkBoundaries, MAX_REPORT_POINTS } from '@mailer/reports';
import type { Collection } from '@mailer/store';
import { eventsOf, type EventDoc } from '../store/events';
import type { ReportDays } from '../../mail/store/report-days';

export interface EventCounts {
  received: number;
  /** Only the keys received in the bucket. */
  byEventKey: Record<string, number>;
}

export interface EventReportDeps {
  events: Collection<EventDoc>;
  /** The daily aggregates the report reads where events were rolled up (absent: the log alone). */
  days?: ReportDays;
}

/** Per-key counts run at most this many at once (each is one range scan of the key's index). */
const KEY_QUERIES_AT_ONCE = 8;

/**
 * The total is one range scan of {accountId, receivedAt}, bucketed in the store. The keys are found
 * with one grouped scan of the range, then each key is counted per bucket with a range scan of
 * {accountId, eventKey, receivedAt}: at most one row per non-empty bucket and key leaves the store,
 * and an account sends few distinct keys.
 */
export async function countEvents(deps: EventReportDeps, input: { accountId: string; boundaries: Date[] }): Promise<EventCounts[]> {
  const { boundaries } = input;
  const problem = checkBoundaries(boundaries, MAX_REPORT_POINTS);
  if (problem) throw invalid('validation_failed', `Invalid report buckets: ${problem}.`, [{ path: 'boundaries', problem }]);
  const events = eventsOf(deps.events, input.accountId, deps.days);
  const limit = semaphore(KEY_QUERIES_AT_ONCE);
  const [received, keys] = await Promise.all([events.countPerBucket(boundaries), events.keysReceived(boundaries[0], boundaries[boundaries.length - 1])]);
  const perKey = await Promise.all(keys.map((key) => limit(() => events.countPerBucket(boundaries, key))));
  return received.map((count, i) => {
    const byEventKey: Record<string, number> = {};
    keys.forEach((key, k) => {
      if (perKey[k][i] > 0) byEventKey[key] = perKey[k][i];
    });
    return { received: count, byEventKey };
  });
}
