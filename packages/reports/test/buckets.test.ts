import { DateTime } from 'luxon';
import { bucketIndex, checkBoundaries, countPoints, parseLocalDate, parseReportPeriod, reportBuckets, type ReportPeriodDto } from '../src';

const iso = (d: Date) => d.toISOString();
const bucketsOf = (dto: ReportPeriodDto) => reportBuckets(parseReportPeriod(dto));
const hours = (a: Date, b: Date) => (+b - +a) / 3_600_000;

describe('reportBuckets: calendar buckets in the zone', () => {
  test('DAY in Europe/Berlin across both DST changes: 23-hour and 25-hour days, midnight local', () => {
    const spring = bucketsOf({ fromDate: '2024-03-30', toDate: '2024-04-01', interval: 'DAY', timeZone: 'Europe/Berlin' });
    expect(spring.periodStarts).toEqual(['2024-03-30', '2024-03-31', '2024-04-01']);
    expect(spring.boundaries.map(iso)).toEqual([
      '2024-03-29T23:00:00.000Z',
      '2024-03-30T23:00:00.000Z',
      '2024-03-31T22:00:00.000Z', // CET -> CEST at 02:00 on the 31st: a 23-hour day
      '2024-04-01T22:00:00.000Z',
    ]);
    const autumn = bucketsOf({ fromDate: '2024-10-27', toDate: '2024-10-27', interval: 'DAY', timeZone: 'Europe/Berlin' });
    expect(autumn.boundaries.map(iso)).toEqual(['2024-10-26T22:00:00.000Z', '2024-10-27T23:00:00.000Z']); // 25 hours
  });

  test('DAY in America/New_York across both DST changes', () => {
    const b = bucketsOf({ fromDate: '2024-03-10', toDate: '2024-03-10', interval: 'DAY', timeZone: 'America/New_York' });
    expect(b.boundaries.map(iso)).toEqual(['2024-03-10T05:00:00.000Z', '2024-03-11T04:00:00.000Z']);
    const a = bucketsOf({ fromDate: '2024-11-03', toDate: '2024-11-03', interval: 'DAY', timeZone: 'America/New_York' });
    expect(a.boundaries.map(iso)).toEqual(['2024-11-03T04:00:00.000Z', '2024-11-04T05:00:00.000Z']);
  });

  test('a day whose midnight does not exist (America/Santiago, DST starts at 00:00) starts at 01:00', () => {
    const b = bucketsOf({ fromDate: '2022-09-10', toDate: '2022-09-11', interval: 'DAY', timeZone: 'America/Santiago' });
    expect(b.boundaries.map(iso)).toEqual(['2022-09-10T04:00:00.000Z', '2022-09-11T04:00:00.000Z', '2022-09-12T03:00:00.000Z']);
  });

  test('the zone defaults to UTC', () => {
    expect(bucketsOf({ fromDate: '2024-01-01', toDate: '2024-01-01', interval: 'DAY' }).boundaries.map(iso)).toEqual(['2024-01-01T00:00:00.000Z', '2024-01-02T00:00:00.000Z']);
  });

  test('WEEK: ISO weeks from Monday, the first clamped to fromDate, across a year end (2024-12-30 is in ISO week 1 of 2025)', () => {
    const b = bucketsOf({ fromDate: '2024-12-25', toDate: '2025-01-08', interval: 'WEEK', timeZone: 'Europe/Berlin' });
    expect(b.periodStarts).toEqual(['2024-12-25', '2024-12-30', '2025-01-06']);
    expect(b.boundaries.map(iso)).toEqual(['2024-12-24T23:00:00.000Z', '2024-12-29T23:00:00.000Z', '2025-01-05T23:00:00.000Z', '2025-01-08T23:00:00.000Z']);
    // a range starting on a Monday is not clamped; one ending on a Monday still gets that week as a point
    expect(bucketsOf({ fromDate: '2024-01-01', toDate: '2024-01-08', interval: 'WEEK' }).periodStarts).toEqual(['2024-01-01', '2024-01-08']);
    // a Sunday start: its week began on the Monday before, but only the Sunday counts
    expect(bucketsOf({ fromDate: '2024-01-07', toDate: '2024-01-07', interval: 'WEEK' }).boundaries.map(iso)).toEqual(['2024-01-07T00:00:00.000Z', '2024-01-08T00:00:00.000Z']);
  });

  test('MONTH in a leap year and across DST (a 743-hour March in Berlin)', () => {
    const b = bucketsOf({ fromDate: '2024-01-31', toDate: '2024-04-01', interval: 'MONTH', timeZone: 'Europe/Berlin' });
    expect(b.periodStarts).toEqual(['2024-01-31', '2024-02-01', '2024-03-01', '2024-04-01']);
    expect(hours(b.boundaries[1], b.boundaries[2])).toBe(29 * 24); // February 2024 has 29 days
    expect(hours(b.boundaries[2], b.boundaries[3])).toBe(31 * 24 - 1);
    expect(iso(b.boundaries[4])).toBe('2024-04-01T22:00:00.000Z');
    const common = bucketsOf({ fromDate: '2023-02-01', toDate: '2023-02-28', interval: 'MONTH' });
    expect(hours(common.boundaries[0], common.boundaries[1])).toBe(28 * 24);
  });

  test('QUARTER and YEAR', () => {
    expect(bucketsOf({ fromDate: '2024-02-15', toDate: '2024-11-01', interval: 'QUARTER' }).periodStarts).toEqual(['2024-02-15', '2024-04-01', '2024-07-01', '2024-10-01']);
    const y = bucketsOf({ fromDate: '2023-06-01', toDate: '2025-01-01', interval: 'YEAR', timeZone: 'America/New_York' });
    expect(y.periodStarts).toEqual(['2023-06-01', '2024-01-01', '2025-01-01']);
    expect(y.boundaries.map(iso)).toEqual(['2023-06-01T04:00:00.000Z', '2024-01-01T05:00:00.000Z', '2025-01-01T05:00:00.000Z', '2025-01-02T05:00:00.000Z']);
  });

  test('1,000 points at the limit are all built', () => {
    const b = bucketsOf({ fromDate: '2024-01-01', toDate: '2026-09-26', interval: 'DAY', timeZone: 'Europe/Berlin' });
    expect(b.periodStarts).toHaveLength(1000);
    expect(b.boundaries).toHaveLength(1001);
    expect(b.periodStarts[999]).toBe('2026-09-26');
  });

  // Property-style check over many seeded random periods and zones: every invariant of the contract.
  test('invariants over 150 random periods in zones with and without DST', () => {
    let seed = 11;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const zones = ['UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Sydney', 'Asia/Kolkata', 'America/Santiago', 'Pacific/Auckland'];
    const intervals = ['DAY', 'WEEK', 'MONTH', 'QUARTER', 'YEAR'] as const;
    const unit = { DAY: 'day', WEEK: 'week', MONTH: 'month', QUARTER: 'quarter', YEAR: 'year' } as const;
    for (let i = 0; i < 150; i++) {
      const interval = intervals[rnd(5)];
      const timeZone = zones[rnd(zones.length)];
      const from = DateTime.fromObject({ year: 1995 + rnd(40), month: 1 + rnd(12), day: 1 + rnd(28) }, { zone: 'utc' });
      const span = { DAY: 400, WEEK: 2000, MONTH: 6000, QUARTER: 15000, YEAR: 30000 }[interval];
      const to = from.plus({ days: rnd(span) });
      const dto = { fromDate: from.toISODate()!, toDate: to.toISODate()!, interval, timeZone };
      const b = bucketsOf(dto);
      const n = b.periodStarts.length;
      expect(n).toBe(countPoints(from, to, interval));
      expect(b.boundaries).toHaveLength(n + 1);
      expect(b.periodStarts[0]).toBe(dto.fromDate);
      expect(checkBoundaries(b.boundaries, 1000)).toBeNull();
      for (let k = 0; k <= n; k++) {
        // every boundary is the first instant of a local calendar day ...
        const local = DateTime.fromJSDate(b.boundaries[k], { zone: timeZone });
        expect(+local.startOf('day')).toBe(+b.boundaries[k]);
        const date = k < n ? b.periodStarts[k] : to.plus({ days: 1 }).toISODate();
        expect(local.toISODate()).toBe(date);
        // ... and, after the first, the start of a calendar unit (Monday for weeks)
        if (k > 0 && k < n) expect(parseLocalDate(date)!.startOf(unit[interval]).toISODate()).toBe(date);
      }
      // the last point is the bucket holding toDate
      expect(parseLocalDate(b.periodStarts[n - 1])! <= to).toBe(true);
    }
  });
});

describe('bucketIndex', () => {
  const b = bucketsOf({ fromDate: '2024-10-26', toDate: '2024-10-28', interval: 'DAY', timeZone: 'Europe/Berlin' }).boundaries;

  test('places an instant into its local day; a boundary belongs to the bucket it starts', () => {
    expect(bucketIndex(b, new Date('2024-10-25T21:59:59.999Z'))).toBe(-1);
    expect(bucketIndex(b, new Date('2024-10-25T22:00:00.000Z'))).toBe(0); // 26th 00:00 CEST
    expect(bucketIndex(b, new Date('2024-10-26T21:59:59.999Z'))).toBe(0);
    expect(bucketIndex(b, new Date('2024-10-26T22:00:00.000Z'))).toBe(1);
    expect(bucketIndex(b, new Date('2024-10-27T01:30:00.000Z'))).toBe(1); // 02:30 CET, the second 02:30 of the 27th
    expect(bucketIndex(b, new Date('2024-10-27T22:59:59.999Z'))).toBe(1); // 23:59:59 CET: the 25-hour day
    expect(bucketIndex(b, new Date('2024-10-27T23:00:00.000Z'))).toBe(2);
    expect(bucketIndex(b, new Date('2024-10-28T23:00:00.000Z'))).toBe(-1); // end of toDate: excluded
    expect(bucketIndex(b, +new Date('2024-10-28T12:00:00.000Z'))).toBe(2); // epoch milliseconds too
  });

  test('agrees with a linear scan on random instants', () => {
    const many = bucketsOf({ fromDate: '2020-01-01', toDate: '2022-09-26', interval: 'WEEK', timeZone: 'America/New_York' }).boundaries;
    const linear = (t: number) => many.findIndex((s, i) => i < many.length - 1 && +s <= t && t < +many[i + 1]);
    const lo = +many[0] - 86_400_000;
    const span = +many[many.length - 1] - lo + 2 * 86_400_000;
    for (let i = 0; i < 2000; i++) {
      const t = lo + Math.floor(((i * 7919) % 2000) / 2000 * span);
      expect(bucketIndex(many, t)).toBe(linear(t));
    }
    for (const s of many.slice(0, -1)) expect(bucketIndex(many, s)).toBe(linear(+s));
  });

  test('fewer than two boundaries hold nothing', () => {
    expect(bucketIndex([], new Date())).toBe(-1);
    expect(bucketIndex([new Date(0)], new Date(0))).toBe(-1);
  });
});

describe('checkBoundaries', () => {
  test.each([
    [[new Date(0)], 'at least two'],
    [[new Date(1), new Date(1)], 'not after'],
    [[new Date(2), new Date(1)], 'not after'],
    [[new Date(0), new Date(NaN)], 'not a valid instant'],
    [Array.from({ length: 1002 }, (_v, i) => new Date(i)), 'at most 1001'],
  ])('refuses bad boundaries (%#)', (boundaries, problem) => {
    expect(checkBoundaries(boundaries, 1000)).toContain(problem);
  });
});
