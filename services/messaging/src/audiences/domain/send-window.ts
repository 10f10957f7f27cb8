// Send windows (docs/integrators.md "Broadcasts": a recipient's mail goes out only between startHour and endHour
// of the reader's local time), pure. Local time follows the zone's rules through luxon: on a day
// whose clocks jump forward past startHour the window opens at the first instant after the jump;
// on a day they fall back, the repeated hour is in the window both times it occurs.
import { DateTime } from 'luxon';
import { isZone, type SendWindow } from './broadcast';

/** The reader's zone: the TEXT field named timeZoneField when it holds a valid IANA zone, else the default. */
export function readerZone(window: SendWindow, fields: Record<string, string>): string {
  const value = window.timeZoneField ? fields[window.timeZoneField]?.trim() : undefined;
  return value && isZone(value) ? value : window.defaultTimeZone;
}

/** Whether `at` is inside the window in `zone` (wall-clock hour in [startHour, endHour)). */
export function inWindow(window: Pick<SendWindow, 'startHour' | 'endHour'>, zone: string, at: Date): boolean {
  const hour = DateTime.fromJSDate(at, { zone }).hour;
  return hour >= window.startHour && hour < window.endHour;
}

/** The first instant at or after `at` when the window is open in `zone`. */
export function windowOpensAt(window: Pick<SendWindow, 'startHour' | 'endHour'>, zone: string, at: Date): Date {
  if (inWindow(window, zone, at)) return at;
  let day = DateTime.fromJSDate(at, { zone });
  // Before today's window: today's opening; after it: tomorrow's.
  if (day.hour >= window.startHour) day = day.plus({ days: 1 });
  for (let tries = 0; tries < 3; tries++, day = day.plus({ days: 1 })) {
    // luxon moves a wall-clock time the clocks skip forward past the jump: an opening hour that does
    // not exist that day opens at the first instant after it. A window that lies wholly inside the
    // skipped hour does not open that day.
    const opening = day.startOf('day').set({ hour: window.startHour });
    if (opening.toMillis() >= at.getTime() && inWindow(window, zone, opening.toJSDate())) return opening.toJSDate();
  }
  throw new Error(`the send window ${window.startHour}-${window.endHour} does not open in ${zone} within three days of ${at.toISOString()}`);
}
