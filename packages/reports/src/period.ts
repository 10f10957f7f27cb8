// ReportPeriodDto (spec "Other records", the API contract "Reports"): {fromDate, toDate, interval} plus an
// optional IANA `timeZone` (default UTC). Dates are LocalDates, both inclusive. Every report of the
// API validates its body here, so the same period answers the same errors everywhere.
import { invalid, type Problem } from '@mailer/kit';
import { DateTime } from 'luxon';
import { isIanaTimeZone } from '@mailer/kit';

export const REPORT_INTERVALS = ['DAY', 'WEEK', 'MONTH', 'QUARTER', 'YEAR'] as const;
export type ReportInterval = (typeof REPORT_INTERVALS)[number];

/** At most this many points (buckets) per report (the API contract). */
export const MAX_REPORT_POINTS = 1000;
export const DEFAULT_REPORT_TIME_ZONE = 'UTC';

/** The errorIds a period can be refused with (all 400). */
export const REPORT_ERROR_IDS = {
  /** A date that is not YYYY-MM-DD or does not exist, fromDate after toDate, an unknown interval. */
  periodInvalid: 'report_period_invalid',
  /** timeZone is not an IANA time zone id. */
  invalidTimeZone: 'report_invalid_time_zone',
  /** The period has more than MAX_REPORT_POINTS buckets at this interval. */
  tooManyPoints: 'report_too_many_points',
} as const;

export interface ReportPeriodDto {
  fromDate: string;
  toDate: string;
  interval: string;
  timeZone?: string | null;
}

/** A validated period: dates as written (YYYY-MM-DD), the zone as given (UTC when none). */
export interface ReportPeriod {
  fromDate: string;
  toDate: string;
  interval: ReportInterval;
  timeZone: string;
}

const LOCAL_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The calendar date of a LocalDate string, or null when it is not YYYY-MM-DD or does not exist (2023-02-29). */
export function parseLocalDate(value: unknown): DateTime | null {
  if (typeof value !== 'string' || !LOCAL_DATE.test(value)) return null;
  // Calendar arithmetic on the dates themselves is zone-free: done in UTC, placed in the zone later.
  const d = DateTime.fromISO(value, { zone: 'utc' });
  return d.isValid && d.toISODate() === value ? d : null;
}

/** Whether the runtime knows the zone as an IANA id (fixed offsets such as "+01:00" are refused). */
export { isIanaTimeZone };

const UNIT: Record<ReportInterval, 'day' | 'week' | 'month' | 'quarter' | 'year'> = {
  DAY: 'day',
  WEEK: 'week', // luxon's weeks are ISO weeks: they start on Monday
  MONTH: 'month',
  QUARTER: 'quarter',
  YEAR: 'year',
};
export const unitOf = (interval: ReportInterval) => UNIT[interval];

/** How many calendar buckets of `interval` overlap [from, to] (both dates, to >= from). */
export function countPoints(from: DateTime, to: DateTime, interval: ReportInterval): number {
  const unit = UNIT[interval];
  const first = from.startOf(unit);
  const last = to.startOf(unit);
  // Bucket starts are whole units apart, so the difference is an integer (rounded against float noise).
  return Math.round(last.diff(first, unit).get(unit)) + 1;
}

const periodInvalid = (message: string, details: Problem[]) => invalid(REPORT_ERROR_IDS.periodInvalid, message, details);

/**
 * Validates a ReportPeriodDto: both dates existing LocalDates, fromDate <= toDate, a known interval,
 * an IANA zone (default UTC), at most MAX_REPORT_POINTS points. Throws a DomainError (INVALID_ARGUMENT,
 * so 400 at the gateway) with one of REPORT_ERROR_IDS and the offending member in `details`.
 */
export function parseReportPeriod(dto: ReportPeriodDto): ReportPeriod {
  const problems: Problem[] = [];
  const from = parseLocalDate(dto.fromDate);
  const to = parseLocalDate(dto.toDate);
  if (!from) problems.push({ path: 'fromDate', problem: 'must be an existing date written YYYY-MM-DD' });
  if (!to) problems.push({ path: 'toDate', problem: 'must be an existing date written YYYY-MM-DD' });
  const interval = dto.interval as ReportInterval;
  if (!REPORT_INTERVALS.includes(interval)) problems.push({ path: 'interval', problem: `must be one of ${REPORT_INTERVALS.join(', ')}` });
  if (problems.length) throw periodInvalid('The report period is invalid.', problems);
  if (from! > to!) throw periodInvalid('fromDate is after toDate.', [{ path: 'fromDate', problem: `must not be after toDate (${dto.toDate})` }]);

  const timeZone = dto.timeZone ?? DEFAULT_REPORT_TIME_ZONE;
  if (!isIanaTimeZone(timeZone)) {
    throw invalid(REPORT_ERROR_IDS.invalidTimeZone, `"${String(timeZone).slice(0, 100)}" is not an IANA time zone.`, [
      { path: 'timeZone', problem: 'must be an IANA time zone id, e.g. Europe/Berlin' },
    ]);
  }
  const points = countPoints(from!, to!, interval);
  if (points > MAX_REPORT_POINTS) {
    throw invalid(REPORT_ERROR_IDS.tooManyPoints, `The period has ${points} points at interval ${interval}; at most ${MAX_REPORT_POINTS} are allowed.`, [
      { path: 'interval', problem: `at most ${MAX_REPORT_POINTS} points: shorten the period or choose a longer interval` },
    ]);
  }
  return { fromDate: dto.fromDate, toDate: dto.toDate, interval, timeZone };
}
