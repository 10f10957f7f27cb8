// SCHEDULE newsletters' cron expressions (the API contract: 5 fields, optionally prefixed `CRON_TZ=<IANA zone> `,
// default UTC), read with croner (docs/architecture.md pick: cron with time zones). Pure: no timers are started
// here; the poller stores the next tick as a due time (docs/architecture.md "Durable time").
import { Cron } from 'croner';
import { isIanaTimeZone } from '@mailer/kit';

export interface ParsedSchedule {
  /** The five fields as given (whitespace normalised). */
  fields: string;
  /** IANA zone of the fields; UTC when the expression names none. */
  timeZone: string;
}

export class ScheduleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScheduleError';
  }
}

const PREFIX = /^CRON_TZ=(\S+)\s+(.*)$/s;

/** The expression's fields and zone; throws ScheduleError naming what is wrong. */
export function parseSchedule(expression: string): ParsedSchedule {
  let rest = expression.trim();
  let timeZone = 'UTC';
  const prefixed = PREFIX.exec(rest);
  if (prefixed) {
    timeZone = prefixed[1];
    rest = prefixed[2].trim();
    if (!isIanaTimeZone(timeZone)) throw new ScheduleError(`CRON_TZ names no IANA time zone: ${timeZone}`);
  } else if (rest.startsWith('CRON_TZ=')) {
    throw new ScheduleError('CRON_TZ=<zone> must be followed by a space and the five cron fields');
  }
  const fields = rest.split(/\s+/).filter(Boolean);
  // croner also reads 6- and 7-field expressions (seconds, years); the contract says 5.
  if (fields.length !== 5) throw new ScheduleError(`a schedule has exactly 5 cron fields (minute hour day-of-month month day-of-week), got ${fields.length}`);
  const parsed = { fields: fields.join(' '), timeZone };
  try {
    cronOf(parsed);
  } catch (err) {
    throw new ScheduleError(`invalid cron expression: ${(err as Error).message}`);
  }
  if (!nextTick(parsed, new Date())) throw new ScheduleError('the cron expression never fires');
  return parsed;
}

const cronOf = (s: ParsedSchedule) => new Cron(s.fields, { paused: true, timezone: s.timeZone });

/** The first tick strictly after `after`, or null when the expression never fires again. */
export function nextTick(schedule: ParsedSchedule, after: Date): Date | null {
  return cronOf(schedule).nextRun(after);
}
