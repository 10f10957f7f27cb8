// Use case CountEmails (POST /reports/emails, the API contract "Reports"): the account's messages per bucket,
// each metric counted by the time of its fact. The gateway made the buckets from the report period
// (@mailer/reports); here they are only instants.
import { invalid } from '@mailer/kit';
import { checkBoundaries, MAX_REPORT_POINTS } from '@mailer/reports';
import type { MessageRepository, ReportTimeField } from '../store/messages';

/** Each metric of the email report and the message time it is counted by. */
export const EMAIL_REPORT_METRICS = {
  sent: 'sentAt',
  delivered: 'deliveredAt',
  // first HUMAN open / click (machine ones only bump machineOpenCount / machineClickCount)
  opened: 'firstOpenedAt',
  clicked: 'firstClickedAt',
  bounced: 'bouncedAt',
  complained: 'complainedAt',
} as const satisfies Record<string, ReportTimeField>;

export type EmailMetric = keyof typeof EMAIL_REPORT_METRICS;
export type EmailCounts = Record<EmailMetric, number>;

export interface EmailReportDeps {
  messagesOf(accountId: string): MessageRepository;
}

/**
 * One aggregate per metric, run together: each is a range scan of its {accountId, <time>} index
 * that leaves the store as at most one row per non-empty bucket. (One pass over the account's
 * messages could not use an index, and would read every message ever sent for a one-day report.)
 */
export async function countEmails(deps: EmailReportDeps, input: { accountId: string; boundaries: Date[] }): Promise<EmailCounts[]> {
  const problem = checkBoundaries(input.boundaries, MAX_REPORT_POINTS);
  if (problem) throw invalid('validation_failed', `Invalid report buckets: ${problem}.`, [{ path: 'boundaries', problem }]);
  const messages = deps.messagesOf(input.accountId);
  const metrics = Object.entries(EMAIL_REPORT_METRICS) as Array<[EmailMetric, ReportTimeField]>;
  const perMetric = await Promise.all(metrics.map(([, field]) => messages.countPerBucket(field, input.boundaries)));
  return input.boundaries.slice(1).map((_end, i) => Object.fromEntries(metrics.map(([metric], m) => [metric, perMetric[m][i]])) as EmailCounts);
}
