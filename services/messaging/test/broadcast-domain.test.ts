// The pure rules of broadcasts: the request's values, the A/B split (deterministic, even, testPercent
// of the audience) and the winner (rates per delivered mail, ties to the lower index), and send
// windows in the reader's zone across daylight-saving changes (luxon's zone rules).
import { DomainError } from '@mailer/kit';
import { broadcastValues, pickWinner, testVariant, type BroadcastRequest } from '../src/audiences/domain/broadcast';
import { inWindow, readerZone, windowOpensAt } from '../src/audiences/domain/send-window';

const valid: BroadcastRequest = { name: ' Spring ', templateName: 'spring', segmentId: 'A1B2C3D4-0000-4000-8000-000000000001' };

function problems(req: BroadcastRequest): string[] {
  try {
    broadcastValues(req);
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).errorId).toBe('validation_failed');
    return (err as DomainError).details!.map((d) => d.path);
  }
  throw new Error('accepted');
}

describe('broadcastValues', () => {
  it('normalizes a valid request (name trimmed, ids lowercased, absent members null)', () => {
    expect(broadcastValues(valid)).toEqual({ name: 'Spring', templateName: 'spring', senderProfileId: null, segmentId: 'a1b2c3d4-0000-4000-8000-000000000001', topicId: null, subject: null, abTest: null, sendWindow: null });
  });

  it('refuses each rule with the member in details', () => {
    const ab = { subjects: ['A', 'B'], testPercent: 20, decideAfterMinutes: 15, metric: 'HUMAN_OPENS' as const };
    expect(problems({ ...valid, name: '' })).toEqual(['body.name']);
    expect(problems({ ...valid, templateName: 'Not A Name' })).toEqual(['body.templateName']);
    expect(problems({ ...valid, topicId: 'nope' })).toEqual(['body.topicId']);
    expect(problems({ ...valid, subject: 'x', abTest: ab })).toEqual(['body.subject']);
    expect(problems({ ...valid, subject: '{% if %}' })).toEqual(['body.subject']);
    expect(problems({ ...valid, abTest: { ...ab, subjects: ['only one'] } })).toEqual(['body.abTest.subjects']);
    expect(problems({ ...valid, abTest: { ...ab, subjects: ['ok', '{{ x | nosuchfilter }}'] } })).toEqual(['body.abTest.subjects[1]']);
    expect(problems({ ...valid, abTest: { ...ab, testPercent: 9, decideAfterMinutes: 1441 } })).toEqual(['body.abTest.testPercent', 'body.abTest.decideAfterMinutes']);
    expect(problems({ ...valid, abTest: { ...ab, metric: 'CLICKS' as never } })).toEqual(['body.abTest.metric']);
    expect(problems({ ...valid, sendWindow: { startHour: 10, endHour: 10, timeZoneField: null, defaultTimeZone: 'UTC' } })).toEqual(['body.sendWindow.endHour']);
    expect(problems({ ...valid, sendWindow: { startHour: 24, endHour: 24, timeZoneField: 'Bad-Name', defaultTimeZone: 'Nowhere/City' } })).toEqual([
      'body.sendWindow.startHour', 'body.sendWindow.endHour', 'body.sendWindow.defaultTimeZone', 'body.sendWindow.timeZoneField',
    ]);
  });
});

describe('the A/B split', () => {
  const ab = { subjects: ['A', 'B', 'C'], testPercent: 30 };
  const ids = Array.from({ length: 30_000 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);

  it('is deterministic: the same reader of the same broadcast always lands in the same place; another broadcast splits differently', () => {
    const first = ids.map((id) => testVariant('b-1', id, ab));
    expect(ids.map((id) => testVariant('b-1', id, ab))).toEqual(first);
    expect(ids.map((id) => testVariant('b-2', id, ab))).not.toEqual(first);
  });

  it('puts about testPercent of the audience in the test group, evenly across the subjects', () => {
    const counts = [0, 0, 0, 0];
    for (const id of ids) {
      const v = testVariant('b-1', id, ab);
      counts[v === null ? 3 : v]++;
    }
    expect(counts[0] + counts[1] + counts[2]).toBeGreaterThan(0.29 * ids.length);
    expect(counts[0] + counts[1] + counts[2]).toBeLessThan(0.31 * ids.length);
    for (const n of counts.slice(0, 3)) expect(Math.abs(n - 3_000)).toBeLessThan(200);
  });
});

describe('pickWinner', () => {
  const s = (delivered: number, humanOpens: number, humanClicks: number) => ({ delivered, humanOpens, humanClicks });

  it('compares per delivered mail, by the metric asked', () => {
    expect(pickWinner([s(100, 50, 5), s(10, 2, 2)], 'HUMAN_CLICKS')).toBe(1); // 5% vs 20%
    expect(pickWinner([s(100, 50, 5), s(10, 2, 2)], 'HUMAN_OPENS')).toBe(0); // 50% vs 20%
  });

  it('ties go to the lower index; a variant without delivered mail scores 0', () => {
    expect(pickWinner([s(10, 1, 1), s(20, 2, 2), s(0, 0, 0)], 'HUMAN_CLICKS')).toBe(0);
    expect(pickWinner([s(0, 0, 0), s(0, 0, 0)], 'HUMAN_OPENS')).toBe(0);
    expect(pickWinner([s(0, 0, 0), s(5, 0, 1)], 'HUMAN_CLICKS')).toBe(1);
  });
});

describe('send windows', () => {
  const w = { startHour: 9, endHour: 17, timeZoneField: 'tz', defaultTimeZone: 'Europe/Berlin' };
  const at = (iso: string) => new Date(iso);

  it("uses the reader's TEXT field when it holds an IANA zone, else the default", () => {
    expect(readerZone(w, { tz: 'America/New_York' })).toBe('America/New_York');
    expect(readerZone(w, { tz: ' Asia/Tokyo ' })).toBe('Asia/Tokyo');
    expect(readerZone(w, { tz: 'not a zone' })).toBe('Europe/Berlin');
    expect(readerZone(w, {})).toBe('Europe/Berlin');
    expect(readerZone({ ...w, timeZoneField: null }, { tz: 'Asia/Tokyo' })).toBe('Europe/Berlin');
  });

  it('is open between startHour and endHour of local time; outside, it opens at the next startHour', () => {
    expect(windowOpensAt(w, 'Europe/Berlin', at('2025-06-10T10:00:00Z'))).toEqual(at('2025-06-10T10:00:00Z')); // 12:00 CEST
    expect(windowOpensAt(w, 'Europe/Berlin', at('2025-06-10T05:30:00Z'))).toEqual(at('2025-06-10T07:00:00Z')); // 07:30 -> 09:00 CEST
    expect(windowOpensAt(w, 'Europe/Berlin', at('2025-06-10T15:00:00Z'))).toEqual(at('2025-06-11T07:00:00Z')); // 17:00 -> tomorrow
    expect(windowOpensAt(w, 'America/New_York', at('2025-06-10T10:00:00Z'))).toEqual(at('2025-06-10T13:00:00Z')); // 06:00 EDT
    expect(windowOpensAt({ startHour: 0, endHour: 24 }, 'Asia/Tokyo', at('2025-06-10T10:00:00Z'))).toEqual(at('2025-06-10T10:00:00Z'));
  });

  it('a startHour the clocks skip (spring forward) opens at the first instant after the jump', () => {
    // Europe/Berlin, 2025-03-30: 02:00 CET jumps to 03:00 CEST (01:00 UTC).
    const night = { startHour: 2, endHour: 5 };
    expect(windowOpensAt(night, 'Europe/Berlin', at('2025-03-29T23:30:00Z'))).toEqual(at('2025-03-30T01:00:00Z'));
    expect(inWindow(night, 'Europe/Berlin', at('2025-03-30T01:00:00Z'))).toBe(true);
    // A window that lies wholly in the skipped hour does not open that day: the next day's 02:00 CEST.
    expect(windowOpensAt({ startHour: 2, endHour: 3 }, 'Europe/Berlin', at('2025-03-29T23:30:00Z'))).toEqual(at('2025-03-31T00:00:00Z'));
  });

  it('the repeated hour (fall back) is in the window both times; a window starting after it opens once', () => {
    // Europe/Berlin, 2025-10-26: 03:00 CEST falls back to 02:00 CET; 02:xx happens at 00:xx and 01:xx UTC.
    const two = { startHour: 2, endHour: 3 };
    expect(windowOpensAt(two, 'Europe/Berlin', at('2025-10-25T23:00:00Z'))).toEqual(at('2025-10-26T00:00:00Z'));
    expect(inWindow(two, 'Europe/Berlin', at('2025-10-26T00:30:00Z'))).toBe(true);
    expect(inWindow(two, 'Europe/Berlin', at('2025-10-26T01:30:00Z'))).toBe(true);
    expect(inWindow(two, 'Europe/Berlin', at('2025-10-26T02:00:00Z'))).toBe(false); // 03:00 CET
    // 09:00 on that 25-hour day is 08:00 UTC (CET), an hour later in UTC than the day before.
    expect(windowOpensAt(w, 'Europe/Berlin', at('2025-10-26T03:00:00Z'))).toEqual(at('2025-10-26T08:00:00Z'));
    expect(windowOpensAt(w, 'Europe/Berlin', at('2025-10-25T03:00:00Z'))).toEqual(at('2025-10-25T07:00:00Z'));
  });

  it('a zone with a DST jump at midnight (America/Santiago) still opens at startHour', () => {
    // 2025-09-07: 00:00 -04 jumps to 01:00 -03 in Santiago.
    expect(windowOpensAt(w, 'America/Santiago', at('2025-09-07T02:00:00Z'))).toEqual(at('2025-09-07T12:00:00Z')); // 09:00 -03
  });
});
