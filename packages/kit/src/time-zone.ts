/**
 * The one check of a time zone the API accepts: an IANA zone id the runtime knows ('Europe/Berlin',
 * 'UTC', 'Etc/GMT+5'). Fixed offsets ('+02:00', '-0500') are refused by their shape first: Node 24's
 * Intl accepts them as zones where Node 20's refused them, and the API must not change with the
 * runtime (an offset has no daylight-saving rules, so it is not a zone a report or a schedule can follow).
 */
const IANA_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

export function isIanaTimeZone(zone: unknown): zone is string {
  if (typeof zone !== 'string' || zone.length > 100 || !IANA_NAME.test(zone)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
