import { DomainError } from '@mailer/kit';
import { bucketsOf, EMAIL_REPORT_METRICS, reportPointsJson } from '../src/mapping/reports';

const counts = (sent: string) => ({ sent, delivered: '0', opened: '0', clicked: '0', bounced: '0', complained: '0' });

describe('report mapping', () => {
  test('points: periodStart and every metric as a Number in the Accept-Language (a repeated header is read as one list)', () => {
    const buckets = bucketsOf({ fromDate: '2024-12-30', toDate: '2025-01-06', interval: 'WEEK' });
    const json = reportPointsJson(buckets, [counts('1234567'), counts('0')], EMAIL_REPORT_METRICS, ['xx', 'de-DE']);
    expect(json.points.map((p) => p.periodStart)).toEqual(['2024-12-30', '2025-01-06']);
    expect(json.points[0].sent).toEqual({ value: 1234567, formattedValue: '1.234.567' });
    expect(json.points[1]).toEqual({ periodStart: '2025-01-06', ...Object.fromEntries(EMAIL_REPORT_METRICS.map((m) => [m, { value: 0, formattedValue: '0' }])) });
  });

  test('a service answering another number of buckets is a bug, not a shifted report', () => {
    const buckets = bucketsOf({ fromDate: '2024-01-01', toDate: '2024-01-03', interval: 'DAY' });
    expect(() => reportPointsJson(buckets, [counts('1')], EMAIL_REPORT_METRICS, undefined)).toThrow(/1 buckets for 3/);
  });

  test('period errors name the member in the body', () => {
    let err: unknown;
    try {
      bucketsOf({ fromDate: '2024-01-02', toDate: '2024-01-01', interval: 'DAY', timeZone: 'UTC' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ errorId: 'report_period_invalid', details: [{ path: 'body.fromDate' }] });
  });
});
