/**
 * Daily aggregates of the report counts, kept longer than the logs they come from
 * (REPORT_RETENTION_DAYS against MESSAGE_RETENTION_DAYS / EVENT_RETENTION_DAYS), so that a report over
 * a period whose messages or events were pruned gives the numbers it gave before.
 *
 * One document per account, series (a report time field of a log, e.g. `email_messages.sentAt`, or
 * `events.receivedAt:<eventKey>`) and UTC day, holding the count per quarter of an hour of that day.
 * Quarters, not days: a report's buckets start at midnight in the caller's time zone, and every zone
 * offset in use is a whole number of quarters, so each quarter lies inside one bucket.
 *
 * A log is rolled up day by day, once a day is over by a day (ROLL_UP_LAG: a fact is recorded when it
 * happens, so a day that ended a day ago gets no new ones), up to `through`, kept per log. Reports
 * read the aggregates before `through` and the log after it. The roll-up of a day writes its
 * documents whole and moves `through` in one transaction, so a crash never counts a day twice.
 */
import { bucketIndex } from '@mailer/reports';
import { acrossAccounts, mongoose, type Collection, type Filter, type Store } from '@mailer/store';

export const QUARTER_MS = 15 * 60_000;
export const DAY_MS = 86_400_000;
/** How long after its end a day is rolled up. */
export const ROLL_UP_LAG_MS = DAY_MS;

export interface ReportDayDoc {
  _id: string;
  accountId: string;
  series: string;
  /** 00:00 UTC of the day. */
  day: Date;
  /** Count per quarter of the day ("0" is 00:00-00:15 UTC); empty quarters are left out. */
  quarters: Record<string, number>;
}

interface RollUpDoc {
  _id: string;
  /** The log's facts before this instant are in the daily aggregates. */
  through: Date;
}

const { Schema } = mongoose;
const daySchema = new Schema(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    series: { type: String, required: true },
    day: { type: Date, required: true },
    quarters: { type: Schema.Types.Mixed, default: {} },
  },
  { versionKey: false, minimize: false },
);
daySchema.index({ accountId: 1, series: 1, day: 1 });
const rollUpSchema = new Schema({ _id: { type: String, required: true }, through: { type: Date, required: true } }, { versionKey: false });

export interface ReportDays {
  days: Collection<ReportDayDoc>;
  rollUps: Collection<RollUpDoc>;
}

/** The aggregates, kept `reportRetentionDays` (REPORT_RETENTION_DAYS) after their day. */
export function reportDayCollections(store: Store, reportRetentionDays: number): ReportDays {
  return {
    days: store.collection<ReportDayDoc>('report_days', daySchema, { expireAfter: { path: 'day', days: reportRetentionDays } }),
    rollUps: store.collection<RollUpDoc>('report_roll_ups', rollUpSchema),
  };
}

/** A log whose report counts are rolled up: the time fields counted, and the series of a fact. */
export interface RolledLog<T> {
  /** The log's collection name (the key of its roll-up point). */
  name: string;
  collection: Collection<T & { _id: string }>;
  fields: readonly string[];
  /** The series a fact of `field` counts in (default `<log>.<field>` alone). */
  seriesOf?(doc: T, field: string): string[];
}

/**
 * Rolls up the days of `log` that ended ROLL_UP_LAG_MS before `now` and are not rolled up yet (on
 * the first run: those of the last `horizonDays`). Reads the log in batches (a scan), and writes in
 * one transaction. The number of days rolled up.
 */
export async function rollUp<T extends { accountId: string }>(store: Store, rd: ReportDays, log: RolledLog<T>, now: Date, horizonDays: number): Promise<number> {
  const target = Math.floor((+now - ROLL_UP_LAG_MS) / DAY_MS) * DAY_MS;
  const from = +((await rd.rollUps.findOne({ _id: log.name }))?.through ?? new Date(target - horizonDays * DAY_MS));
  if (from >= target) return 0;
  const docs = new Map<string, ReportDayDoc>();
  const range = { $gte: new Date(from), $lt: new Date(target) };
  const filter: Filter = { $or: log.fields.map((f) => ({ [f]: range })) };
  const projection = Object.fromEntries(['accountId', ...log.fields].map((f) => [f, 1 as const]));
  // across accounts: a day is rolled up for every account at once
  for await (const batch of acrossAccounts(log.collection).scan(filter, { projection: log.seriesOf ? undefined : projection })) {
    for (const fact of batch as T[]) {
      for (const field of log.fields) {
        const at = (fact as Record<string, unknown>)[field];
        if (!(at instanceof Date) || +at < from || +at >= target) continue;
        const day = Math.floor(+at / DAY_MS) * DAY_MS;
        const q = String(Math.floor((+at - day) / QUARTER_MS));
        for (const series of log.seriesOf?.(fact, field) ?? [`${log.name}.${field}`]) {
          const id = `${fact.accountId}|${series}|${new Date(day).toISOString().slice(0, 10)}`;
          let doc = docs.get(id);
          if (!doc) docs.set(id, (doc = { _id: id, accountId: fact.accountId, series, day: new Date(day), quarters: {} }));
          doc.quarters[q] = (doc.quarters[q] ?? 0) + 1;
        }
      }
    }
  }
  await store.transaction(async (tx) => {
    // whole documents: days before `from` were never started, so a rerun after a crash writes the same
    const ops = [...docs.values()].map((d) => ({ updateOne: { filter: { accountId: d.accountId, _id: d._id }, update: { $set: { series: d.series, day: d.day, quarters: d.quarters } }, upsert: true } }));
    for (let i = 0; i < ops.length; i += 1000) await rd.days.bulkWrite(ops.slice(i, i + 1000), { tx });
    await rd.rollUps.updateOne({ _id: log.name }, { $set: { through: new Date(target) } }, { upsert: true, tx });
  });
  return (target - from) / DAY_MS;
}

/**
 * Counts of one series per bucket [boundaries[i], boundaries[i + 1]): from the daily aggregates
 * before the log's roll-up point, from the log itself (`fromLog`, given boundaries) after it.
 */
export async function countPerBucketWithDays(rd: ReportDays, log: string, accountId: string, series: string, boundaries: Date[], fromLog: (boundaries: Date[]) => Promise<number[]>): Promise<number[]> {
  const through = await rolledThrough(rd, log);
  const first = +boundaries[0];
  const last = +boundaries[boundaries.length - 1];
  if (through <= first) return fromLog(boundaries);
  const split = Math.min(through, last);
  const counts = new Array<number>(boundaries.length - 1).fill(0);
  for (const d of await rd.days.find({ accountId, series, day: { $gt: new Date(first - DAY_MS), $lt: new Date(split) } })) {
    for (const [q, n] of Object.entries(d.quarters)) {
      const t = +d.day + Number(q) * QUARTER_MS;
      if (t < first || t >= split) continue;
      const i = bucketIndex(boundaries, t);
      if (i >= 0) counts[i] += n;
    }
  }
  if (split < last) {
    // the bucket holding `split` starts in the aggregates and ends in the log
    const later = boundaries.filter((b) => +b > split);
    const offset = boundaries.length - 1 - later.length;
    (await fromLog([new Date(split), ...later])).forEach((n, k) => (counts[offset + k] += n));
  }
  return counts;
}

/** The series of the account with aggregates in [from, to) (before the roll-up point) whose name starts with `prefix`. */
export async function seriesWithDays(rd: ReportDays, log: string, accountId: string, prefix: string, from: Date, to: Date): Promise<string[]> {
  const end = Math.min(await rolledThrough(rd, log), +to);
  if (end <= +from) return [];
  const found = new Set<string>();
  const escaped = prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  for await (const batch of rd.days.scan({ accountId, series: { $regex: new RegExp(`^${escaped}`) }, day: { $gt: new Date(+from - DAY_MS), $lt: new Date(end) } })) {
    for (const d of batch) {
      if (Object.keys(d.quarters).some((q) => +d.day + Number(q) * QUARTER_MS >= +from && +d.day + Number(q) * QUARTER_MS < end)) found.add(d.series);
    }
  }
  return [...found];
}

async function rolledThrough(rd: ReportDays, log: string): Promise<number> {
  return +((await rd.rollUps.findOne({ _id: log }))?.through ?? 0);
}
