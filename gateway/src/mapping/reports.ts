// Reports (the API contract "Reports"): a ReportPeriodDto in, `{points: [{periodStart, <metric>: Number}]}` out.
// The gateway validates the period and makes its calendar buckets (@mailer/reports); the owning
// service counts between the bucket boundaries; the gateway writes every count as a Number in the
// request's Accept-Language.
import { DomainError } from '@mailer/kit';
import { numberFormatter, parseReportPeriod, reportBuckets, type ApiNumber, type ReportBuckets } from '@mailer/reports';
import type { Schemas } from '../openapi/types';
import { int64 } from './numbers';

/** The buckets of a request's period; throws the period's 400s (report_period_invalid, report_invalid_time_zone, report_too_many_points). */
export function bucketsOf(body: Schemas['ReportPeriodDto']): ReportBuckets {
  try {
    return reportBuckets(parseReportPeriod(body));
  } catch (err) {
    // the package names members of the period; the API's details name them in the body
    if (err instanceof DomainError) throw new DomainError(err.code, err.errorId, err.message, err.details?.map((d) => ({ ...d, path: `body.${d.path}` })));
    throw err;
  }
}

/** The boundaries as the services take them (UTC ISO 8601 instants). */
export const boundariesToProto = (buckets: ReportBuckets): string[] => buckets.boundaries.map((b) => b.toISOString());

/**
 * The report's points: one per bucket, `periodStart` and each metric's count (int64 strings from
 * the service) as a Number. A service answering another number of buckets is a bug (500).
 */
export function reportPointsJson<M extends string>(
  buckets: ReportBuckets,
  counts: ReadonlyArray<Record<M, string>>,
  metrics: readonly M[],
  acceptLanguage: string | string[] | undefined,
): { points: Array<{ periodStart: string } & Record<M, ApiNumber>> } {
  if (counts.length !== buckets.periodStarts.length) throw new Error(`the service answered ${counts.length} buckets for ${buckets.periodStarts.length}`);
  const format = numberFormatter(Array.isArray(acceptLanguage) ? acceptLanguage.join(',') : acceptLanguage);
  return {
    points: buckets.periodStarts.map((periodStart, i) => {
      const point = { periodStart } as { periodStart: string } & Record<M, ApiNumber>;
      for (const m of metrics) (point as Record<M, ApiNumber>)[m] = format(int64(counts[i][m]));
      return point;
    }),
  };
}

export const EMAIL_REPORT_METRICS = ['sent', 'delivered', 'opened', 'clicked', 'bounced', 'complained'] as const;
export const SUBSCRIBER_REPORT_METRICS = ['newSubscribers', 'confirmed', 'unsubscribed'] as const;
