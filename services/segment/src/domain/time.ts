/**
 * Calendar dates and IANA time zones with the platform's Intl data (Node ships full ICU), so no date
 * library: we only need "which local date is this instant" and "when does this local date start".
 * LocalDates are 'YYYY-MM-DD' strings; they compare correctly as strings.
 */

import { isIanaTimeZone } from '@mailer/kit';

const DAY_MS = 86_400_000;
const LOCAL_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Epoch milliseconds of a LocalDate at 00:00 UTC, or NaN when it is not a real calendar date. */
function utcMidnight(date: string): number {
  const m = LOCAL_DATE.exec(date);
  if (!m) return NaN;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0-99 to 1900-1999.
  const t = new Date(0).setUTCFullYear(y, mo - 1, d);
  const back = new Date(t);
  return back.getUTCFullYear() === y && back.getUTCMonth() === mo - 1 && back.getUTCDate() === d ? t : NaN;
}

function formatUtcDate(ms: number): string {
  const d = new Date(ms);
  return `${String(d.getUTCFullYear()).padStart(4, '0')}-${String(d.getUTCMonth() + 1).padStart(2, '0')}-${String(d.getUTCDate()).padStart(2, '0')}`;
}

/** True for a real calendar date written YYYY-MM-DD (years 0001-9999). */
export function isLocalDate(value: unknown): value is string {
  return typeof value === 'string' && value >= '0001' && !Number.isNaN(utcMidnight(value));
}

/** Calendar arithmetic on LocalDates (no zone involved). */
export function addDays(date: string, days: number): string {
  const t = utcMidnight(date);
  if (Number.isNaN(t)) throw new Error(`not a LocalDate: ${date}`);
  return formatUtcDate(t + days * DAY_MS);
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, f);
  }
  return f;
}

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function wallClock(instantMs: number, zone: string): WallClock {
  const out: Record<string, number> = {};
  for (const part of formatter(zone).formatToParts(instantMs)) {
    if (part.type !== 'literal') out[part.type] = Number(part.value);
  }
  return out as unknown as WallClock;
}

/** Whether this is an IANA zone name the runtime knows ('Asia/Tokyo', 'UTC'); offsets like '+09:00' are refused. */
export const isTimeZone = isIanaTimeZone;

/** The calendar date an instant falls on in a zone. */
export function localDateOf(instant: Date | number, zone: string): string {
  const w = wallClock(typeof instant === 'number' ? instant : instant.getTime(), zone);
  return `${String(w.year).padStart(4, '0')}-${String(w.month).padStart(2, '0')}-${String(w.day).padStart(2, '0')}`;
}

/** Zone offset (local wall clock minus UTC) at an instant, to the second as Intl reports it. */
function offsetMs(instantMs: number, zone: string): number {
  const w = wallClock(instantMs, zone);
  const wallMs = new Date(0).setUTCFullYear(w.year, w.month - 1, w.day) + ((w.hour * 60 + w.minute) * 60 + w.second) * 1000;
  return wallMs - (instantMs - (((instantMs % 1000) + 1000) % 1000));
}

/**
 * The first instant whose local date in `zone` is `date` or later. Local dates never decrease as time
 * passes, so "local date of x lies in [from, to]" is exactly startOfLocalDay(from) <= x < startOfLocalDay(to + 1).
 * Usually that instant is local midnight; where a DST change skips midnight (America/Santiago) it is
 * the moment the clocks jump, and where midnight happens twice it is the first one.
 */
export function startOfLocalDay(date: string, zone: string): Date {
  const wall = utcMidnight(date);
  if (Number.isNaN(wall)) throw new Error(`not a LocalDate: ${date}`);
  const isStart = (t: number) => localDateOf(t, zone) >= date && localDateOf(t - 1, zone) < date;
  const first = wall - offsetMs(wall, zone);
  const second = wall - offsetMs(first, zone);
  for (const t of [Math.min(first, second), Math.max(first, second)]) if (isStart(t)) return new Date(t);
  // Rare transitions: bisect for the first instant on or after `date` (offsets stay within +-15 h).
  let lo = wall - 15 * 3_600_000; // before the date everywhere
  let hi = wall + 15 * 3_600_000; // on or after it everywhere
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (localDateOf(mid, zone) >= date) hi = mid;
    else lo = mid;
  }
  return new Date(hi);
}
