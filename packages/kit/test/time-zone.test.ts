// Time zones are IANA ids on every runtime: Node 24's Intl takes '+02:00' as a zone, Node 20's did not.
import { isIanaTimeZone } from '../src/time-zone';

test('IANA ids the runtime knows are accepted', () => {
  for (const zone of ['UTC', 'Europe/Berlin', 'America/Argentina/Buenos_Aires', 'Etc/GMT+5', 'Asia/Tokyo']) expect([zone, isIanaTimeZone(zone)]).toEqual([zone, true]);
});

test('fixed offsets, unknown names and non-strings are refused (the same on Node 20 and 24)', () => {
  for (const zone of ['+02:00', '-05:00', '+0200', '+02', 'UTC+2', 'GMT+02:00', 'Mars/Olympus', '', ' Europe/Berlin', 'Europe/Berlin/', 'x'.repeat(101), 5, null]) {
    expect([zone, isIanaTimeZone(zone)]).toEqual([zone, false]);
  }
});
