import { addDays, isLocalDate, isTimeZone, localDateOf, startOfLocalDay } from '../src/domain/time';

describe('local dates in IANA zones', () => {
  it('reads 23:30 UTC as the next day in Tokyo and the same day in New York', () => {
    expect(localDateOf(new Date('2025-02-28T23:30:00Z'), 'Asia/Tokyo')).toBe('2025-03-01');
    expect(localDateOf(new Date('2025-02-28T23:30:00Z'), 'America/New_York')).toBe('2025-02-28');
  });

  it.each([
    ['2025-03-01', 'Asia/Tokyo', '2025-02-28T15:00:00.000Z'],
    ['2025-03-09', 'America/New_York', '2025-03-09T05:00:00.000Z'], // DST starts at 02:00 that day
    ['2025-03-10', 'America/New_York', '2025-03-10T04:00:00.000Z'],
    ['2024-09-08', 'America/Santiago', '2024-09-08T04:00:00.000Z'], // clocks jump from 24:00 to 01:00: the day starts at the jump
    ['2025-04-06', 'America/Santiago', '2025-04-06T04:00:00.000Z'], // 24:00 (-03) falls back to 23:00 of the 5th: the 6th starts an hour later
    ['2024-12-31', 'Pacific/Kiritimati', '2024-12-30T10:00:00.000Z'],
    ['2024-10-06', 'Australia/Lord_Howe', '2024-10-05T13:30:00.000Z'],
    ['2024-02-29', 'Asia/Kathmandu', '2024-02-28T18:15:00.000Z'],
  ])('start of %s in %s is %s', (date, zone, iso) => {
    expect(startOfLocalDay(date, zone).toISOString()).toBe(iso);
  });

  it.each(['Asia/Tokyo', 'America/New_York', 'America/Santiago', 'Australia/Lord_Howe', 'Europe/Berlin', 'Pacific/Apia', 'Asia/Beirut', 'America/Havana'])(
    'every day of 2020-2026 in %s starts exactly where the local date changes',
    (zone) => {
      for (let d = '2020-01-01'; d <= '2026-12-31'; d = addDays(d, 1)) {
        const t = startOfLocalDay(d, zone).getTime();
        expect([d, localDateOf(t, zone) >= d && localDateOf(t - 1, zone) < d]).toEqual([d, true]);
      }
    },
  );

  it('does calendar arithmetic across months, leap days and years', () => {
    expect(addDays('2024-02-28', 1)).toBe('2024-02-29');
    expect(addDays('2024-03-01', -1)).toBe('2024-02-29');
    expect(addDays('2024-12-31', 1)).toBe('2025-01-01');
    expect(addDays('0050-01-01', 0)).toBe('0050-01-01');
  });

  it('accepts real calendar dates only', () => {
    expect(['2024-02-29', '0001-01-01', '9999-12-31'].every(isLocalDate)).toBe(true);
    expect(['2023-02-29', '2024-13-01', '2024-1-01', '0000-01-01', '2024-01-01T00:00:00Z', '', 20240101].some(isLocalDate)).toBe(false);
  });

  it('accepts IANA zone names, not offsets or nonsense', () => {
    expect(['UTC', 'Asia/Tokyo', 'America/Argentina/Buenos_Aires', 'Etc/GMT+5'].every(isTimeZone)).toBe(true);
    expect(['+09:00', 'Mars/Olympus', '', 'asia tokyo', null].some(isTimeZone)).toBe(false);
  });
});
