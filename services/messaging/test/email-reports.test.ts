import { DomainError } from '@mailer/kit';
import { parseReportPeriod, reportBuckets } from '@mailer/reports';
import { openTempStore, type TempStore } from '@mailer/testing/store';
import { countEmails } from '../src/mail/app/email-reports';
import { messageCollections, messagesOf, type MessageCollections } from '../src/mail/store/messages';
import { insertMessages, messageRecord } from './support/report-messages';

// The CountEmails use case on a real embedded store: message records inserted through the
// repository, counted per local day of America/New_York across the end of DST (a 25-hour day).

let temp: TempStore;
let collections: MessageCollections;
const deps = () => ({ messagesOf: (accountId: string) => messagesOf(collections, accountId) });
const at = (iso: string) => new Date(iso);

beforeAll(async () => {
  temp = await openTempStore('messaging-reports');
  collections = messageCollections(temp.store);
  await insertMessages(messagesOf(collections, 'acct-a'), [
    // 2024-11-02 (EDT, UTC-4): the day starts 04:00Z
    messageRecord('m1', { sentAt: at('2024-11-02T04:00:00.000Z'), deliveredAt: at('2024-11-02T04:00:02.000Z'), firstOpenedAt: at('2024-11-03T05:30:00.000Z') }),
    messageRecord('m0', { sentAt: at('2024-11-02T03:59:59.999Z'), deliveredAt: at('2024-11-02T04:00:01.000Z') }), // sent 2024-11-01 23:59:59.999 local: outside
    // 2024-11-03 lasts 25 hours (04:00Z to 05:00Z of the 4th): 01:00-02:00 local happens twice
    messageRecord('m2', { sentAt: at('2024-11-03T05:30:00.000Z'), bouncedAt: at('2024-11-03T06:30:00.000Z') }), // 01:30 EDT, bounced at 01:30 EST: both on the 3rd
    messageRecord('m3', { sentAt: at('2024-11-04T04:59:59.999Z'), firstClickedAt: at('2024-11-04T05:00:00.000Z'), complainedAt: at('2024-11-04T06:00:00.000Z') }), // 23:59:59.999 EST of the 3rd; click at 00:00 of the 4th
    // machine activity only: no open, no click
    messageRecord('m4', { sentAt: at('2024-11-04T12:00:00.000Z'), machineOpenCount: 3, machineClickCount: 1 }),
    messageRecord('m5', { sentAt: at('2024-11-05T05:00:00.000Z') }), // 2024-11-05 00:00 EST: after the period
    messageRecord('m6', {}), // queued, never sent
  ]);
  await insertMessages(messagesOf(collections, 'acct-b'), [messageRecord('b1', { sentAt: at('2024-11-03T12:00:00.000Z'), firstOpenedAt: at('2024-11-03T12:00:00.000Z') })]);
});
afterAll(() => temp?.close());

const zero = { sent: 0, delivered: 0, opened: 0, clicked: 0, bounced: 0, complained: 0 };

test('counts each metric by its own fact time, per local day, across a 25-hour day; another account never counts', async () => {
  const { periodStarts, boundaries } = reportBuckets(parseReportPeriod({ fromDate: '2024-11-02', toDate: '2024-11-04', interval: 'DAY', timeZone: 'America/New_York' }));
  expect(periodStarts).toEqual(['2024-11-02', '2024-11-03', '2024-11-04']);
  expect(await countEmails(deps(), { accountId: 'acct-a', boundaries })).toEqual([
    { ...zero, sent: 1, delivered: 2 },
    { ...zero, sent: 2, opened: 1, bounced: 1 },
    { ...zero, sent: 1, clicked: 1, complained: 1 },
  ]);
  expect(await countEmails(deps(), { accountId: 'acct-b', boundaries })).toEqual([zero, { ...zero, sent: 1, opened: 1 }, zero]);
  expect(await countEmails(deps(), { accountId: 'acct-none', boundaries })).toEqual([zero, zero, zero]);
});

test('a single bucket over the whole period counts the same messages', async () => {
  const { boundaries } = reportBuckets(parseReportPeriod({ fromDate: '2024-11-02', toDate: '2024-11-04', interval: 'YEAR', timeZone: 'America/New_York' }));
  expect(await countEmails(deps(), { accountId: 'acct-a', boundaries })).toEqual([{ sent: 4, delivered: 2, opened: 1, clicked: 1, bounced: 1, complained: 1 }]);
});

test.each([
  ['none', []],
  ['one', [at('2024-11-02T04:00:00Z')]],
  ['descending', [at('2024-11-03T04:00:00Z'), at('2024-11-02T04:00:00Z')]],
  ['too many', Array.from({ length: 1002 }, (_v, i) => new Date(i * 1000))],
])('refuses %s boundaries with validation_failed', async (_name, boundaries) => {
  const err = await countEmails(deps(), { accountId: 'acct-a', boundaries }).catch((e) => e);
  expect(err).toBeInstanceOf(DomainError);
  expect(err.errorId).toBe('validation_failed');
});
