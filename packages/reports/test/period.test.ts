import { DomainError } from '@mailer/kit';
import { MAX_REPORT_POINTS, parseReportPeriod, type ReportPeriodDto } from '../src';

function refusal(dto: ReportPeriodDto): DomainError {
  try {
    parseReportPeriod(dto);
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return err as DomainError;
  }
  throw new Error(`accepted ${JSON.stringify(dto)}`);
}

describe('parseReportPeriod', () => {
  test('accepts a period and defaults the zone to UTC (null too)', () => {
    expect(parseReportPeriod({ fromDate: '2024-01-01', toDate: '2024-01-31', interval: 'DAY' })).toEqual({
      fromDate: '2024-01-01',
      toDate: '2024-01-31',
      interval: 'DAY',
      timeZone: 'UTC',
    });
    expect(parseReportPeriod({ fromDate: '2024-01-01', toDate: '2024-01-01', interval: 'YEAR', timeZone: null }).timeZone).toBe('UTC');
    expect(parseReportPeriod({ fromDate: '2024-01-01', toDate: '2024-01-01', interval: 'WEEK', timeZone: 'America/New_York' }).timeZone).toBe('America/New_York');
  });

  test.each([
    ['a day that does not exist (not a leap year)', { fromDate: '2023-02-29', toDate: '2023-03-01' }, 'fromDate'],
    ['month 13', { fromDate: '2024-01-01', toDate: '2024-13-01' }, 'toDate'],
    ['day 31 of a 30-day month', { fromDate: '2024-04-31', toDate: '2024-05-01' }, 'fromDate'],
    ['no zero padding', { fromDate: '2024-1-01', toDate: '2024-01-02' }, 'fromDate'],
    ['a date-time', { fromDate: '2024-01-01T00:00:00Z', toDate: '2024-01-02' }, 'fromDate'],
    ['empty', { fromDate: '', toDate: '2024-01-02' }, 'fromDate'],
    ['not a string', { fromDate: 20240101 as unknown as string, toDate: '2024-01-02' }, 'fromDate'],
  ])('refuses %s with report_period_invalid naming the member', (_name, dates, path) => {
    const err = refusal({ ...dates, interval: 'DAY' });
    expect(err.errorId).toBe('report_period_invalid');
    expect(err.details?.map((d) => d.path)).toContain(path);
  });

  test('accepts 29 February of a leap year (2024, 2000) and refuses it in 1900', () => {
    expect(parseReportPeriod({ fromDate: '2024-02-29', toDate: '2024-02-29', interval: 'DAY' }).fromDate).toBe('2024-02-29');
    expect(parseReportPeriod({ fromDate: '2000-02-29', toDate: '2000-02-29', interval: 'DAY' }).fromDate).toBe('2000-02-29');
    expect(refusal({ fromDate: '1900-02-29', toDate: '1900-03-01', interval: 'DAY' }).errorId).toBe('report_period_invalid');
  });

  test('refuses fromDate after toDate (one day is fine)', () => {
    const err = refusal({ fromDate: '2024-03-02', toDate: '2024-03-01', interval: 'DAY' });
    expect(err.errorId).toBe('report_period_invalid');
    expect(err.details).toEqual([{ path: 'fromDate', problem: expect.stringContaining('after toDate') }]);
    expect(parseReportPeriod({ fromDate: '2024-03-01', toDate: '2024-03-01', interval: 'DAY' }).toDate).toBe('2024-03-01');
  });

  test.each(['HOUR', 'day', '', 'WEEKS'])('refuses interval %j with report_period_invalid', (interval) => {
    const err = refusal({ fromDate: '2024-01-01', toDate: '2024-01-02', interval });
    expect(err.errorId).toBe('report_period_invalid');
    expect(err.details?.map((d) => d.path)).toEqual(['interval']);
  });

  test.each(['Mars/Olympus_Mons', '+01:00', 'Europe/Berlin ', '', 'x'.repeat(200)])('refuses time zone %j with report_invalid_time_zone', (timeZone) => {
    const err = refusal({ fromDate: '2024-01-01', toDate: '2024-01-02', interval: 'DAY', timeZone });
    expect(err.errorId).toBe('report_invalid_time_zone');
    expect(err.details?.[0].path).toBe('timeZone');
    expect(err.message.length).toBeLessThan(150);
  });

  describe(`at most ${MAX_REPORT_POINTS} points`, () => {
    test.each([
      // [interval, fromDate, last toDate with 1,000 points, first toDate with 1,001]
      ['DAY', '2024-01-01', '2026-09-26', '2026-09-27'], // 2024 is a leap year: 366 + 365 + 269 days
      ['WEEK', '2024-01-03', '2043-03-01', '2043-03-02'], // Wed; 2043-03-02 is a Monday: week 1,001 starts
      ['MONTH', '2024-01-31', '2107-04-30', '2107-05-01'],
      ['QUARTER', '2024-02-15', '2273-12-31', '2274-01-01'],
      ['YEAR', '1026-07-01', '2025-12-31', '2026-01-01'],
    ])('%s from %s: up to %s accepted, %s refused with report_too_many_points', (interval, fromDate, lastOk, firstTooMany) => {
      expect(parseReportPeriod({ fromDate, toDate: lastOk, interval }).toDate).toBe(lastOk);
      const err = refusal({ fromDate, toDate: firstTooMany, interval });
      expect(err.errorId).toBe('report_too_many_points');
      expect(err.message).toContain('1001 points');
    });

    // How fast (without building its 3.65 million buckets) is measured by bench/refusals.js.
    test('a period over the whole calendar is refused, naming its number of points', () => {
      const err = refusal({ fromDate: '0001-01-01', toDate: '9999-12-31', interval: 'DAY' });
      expect(err.errorId).toBe('report_too_many_points');
      expect(err.message).toContain('3652059 points');
    });
  });

  test('checks the dates before the zone (one error at a time, the period first)', () => {
    expect(refusal({ fromDate: '2024-02-30', toDate: '2024-03-01', interval: 'DAY', timeZone: 'Nowhere/Land' }).errorId).toBe('report_period_invalid');
  });
});
