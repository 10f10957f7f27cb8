import { Aggregator } from 'mingo';
import { bucketCountPipeline, countsPerBucket, parseReportPeriod, reportBuckets } from '../src';

// The pipeline runs on MongoDB and on the embedded engine (mingo); here on mingo directly, the
// service's test runs it through the real store.
describe('bucketCountPipeline + countsPerBucket', () => {
  const { boundaries } = reportBuckets(parseReportPeriod({ fromDate: '2024-03-30', toDate: '2024-04-01', interval: 'DAY', timeZone: 'Europe/Berlin' }));
  const docs = [
    { accountId: 'a', sentAt: new Date('2024-03-29T22:59:59.999Z') }, // 29th 23:59:59 CET: before the range
    { accountId: 'a', sentAt: new Date('2024-03-29T23:00:00.000Z') }, // 30th 00:00 CET
    { accountId: 'a', sentAt: new Date('2024-03-31T21:59:00.000Z') }, // 31st 23:59 CEST
    { accountId: 'a', sentAt: new Date('2024-03-31T22:00:00.000Z') }, // 1st 00:00 CEST
    { accountId: 'a', sentAt: new Date('2024-04-01T22:00:00.000Z') }, // 2nd: after the range
    { accountId: 'a', sentAt: null },
    { accountId: 'b', sentAt: new Date('2024-03-30T12:00:00.000Z') }, // another account
  ];

  test('counts one account per local day, zeros included, nothing outside the range', () => {
    const pipeline = bucketCountPipeline('a', 'sentAt', boundaries);
    const rows = new Aggregator(pipeline).run(docs) as Array<{ _id: number; count: number }>;
    expect(countsPerBucket(rows, boundaries)).toEqual([1, 1, 1]);
    expect(countsPerBucket([], boundaries)).toEqual([0, 0, 0]);
  });

  test('a row that names no bucket is a bug, not a silent miscount', () => {
    expect(() => countsPerBucket([{ _id: 0, count: 1 }], boundaries)).toThrow(/not one of the boundaries/);
  });

  test('times stored as ISO strings (the subscriber service today) count alike', () => {
    const asStrings = docs.map((d) => ({ ...d, sentAt: d.sentAt && d.sentAt.toISOString() }));
    const rows = new Aggregator(bucketCountPipeline('a', 'sentAt', boundaries, 'isoString')).run(asStrings) as Array<{ _id: number; count: number }>;
    expect(countsPerBucket(rows, boundaries)).toEqual([1, 1, 1]);
  });
});
