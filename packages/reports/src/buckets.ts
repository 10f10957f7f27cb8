// Calendar buckets of a validated period in its zone (the API contract "Reports"): every bucket that overlaps
// [fromDate, toDate] is a point, empty ones included; a point's periodStart is the later of the
// bucket's start and fromDate. The service that owns the facts counts them between the boundaries.
import { DateTime, type DurationLikeObject } from 'luxon';
import { parseLocalDate, unitOf, type ReportPeriod } from './period';

export interface ReportBuckets {
  /** One LocalDate (YYYY-MM-DD) per point, ascending. */
  periodStarts: string[];
  /**
   * periodStarts.length + 1 instants, ascending: point i counts the instants in
   * [boundaries[i], boundaries[i + 1]). The first is fromDate 00:00 in the zone, the last toDate + 1
   * day 00:00 in the zone, so only days inside the range count. A day whose midnight does not
   * exist in the zone (DST starting at 00:00) starts at its first existing instant.
   */
  boundaries: Date[];
}

/** The first instant of a calendar date in the zone. */
export function startOfDayIn(date: DateTime, timeZone: string): Date {
  // UTC (the default zone) needs no zone rules; luxon's zone arithmetic costs tens of microseconds.
  if (timeZone === 'UTC') return new Date(Date.UTC(date.year, date.month - 1, date.day));
  const local = DateTime.fromObject({ year: date.year, month: date.month, day: date.day }, { zone: timeZone });
  // luxon moves a midnight that does not exist (DST starting at 00:00) forward to the first instant
  // that does; startOf('day') is only needed when it landed elsewhere.
  return (local.hour === 0 && local.minute === 0 ? local : local.startOf('day')).toJSDate();
}

/** The buckets of a period validated by parseReportPeriod (so at most MAX_REPORT_POINTS of them). */
export function reportBuckets(period: ReportPeriod): ReportBuckets {
  const from = parseLocalDate(period.fromDate);
  const to = parseLocalDate(period.toDate);
  if (!from || !to || from > to) throw new Error('reportBuckets: the period was not validated');
  const unit = unitOf(period.interval);
  const end = to.plus({ days: 1 });
  // Bucket starts as calendar dates (zone-free arithmetic in UTC); the first clamped to fromDate.
  const step: DurationLikeObject = { [unit]: 1 };
  const starts: DateTime[] = [from];
  for (let next = from.startOf(unit).plus(step); next < end; next = next.plus(step)) starts.push(next);
  return {
    periodStarts: starts.map((d) => d.toISODate()!),
    boundaries: [...starts, end].map((d) => startOfDayIn(d, period.timeZone)),
  };
}

/**
 * The index of the bucket holding `instant` (binary search over the boundaries), or -1 when it lies
 * outside [boundaries[0], boundaries[last]).
 */
export function bucketIndex(boundaries: ReadonlyArray<Date | number>, instant: Date | number): number {
  const t = +instant;
  const n = boundaries.length;
  if (n < 2 || t < +boundaries[0] || t >= +boundaries[n - 1]) return -1;
  let lo = 0;
  let hi = n - 1; // invariant: boundaries[lo] <= t < boundaries[hi]
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (+boundaries[mid] <= t) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** Checks boundaries received from a caller: at least two, strictly ascending, valid instants. */
export function checkBoundaries(boundaries: ReadonlyArray<Date>, maxPoints: number): string | null {
  if (boundaries.length < 2) return 'at least two boundaries are required';
  if (boundaries.length > maxPoints + 1) return `at most ${maxPoints + 1} boundaries are allowed`;
  for (let i = 0; i < boundaries.length; i++) {
    if (Number.isNaN(+boundaries[i])) return `boundary ${i} is not a valid instant`;
    if (i > 0 && +boundaries[i] <= +boundaries[i - 1]) return `boundary ${i} is not after boundary ${i - 1}`;
  }
  return null;
}
