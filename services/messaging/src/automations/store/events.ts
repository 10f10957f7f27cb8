// The event log (collection 'events'): every custom event consumed from the EVENTS stream, recorded
// once per eventId (the document's _id, a unique index: a redelivered or re-published event finds
// its record and changes nothing), with what it led to (the API contract GET /events). Every query filters by
// accountId first.
import { bucketCountPipeline, countsPerBucket } from '@mailer/reports';
import { mongoose, type AccountFilter, type Collection, type Store, type Transaction } from '@mailer/store';
import { countPerBucketWithDays, seriesWithDays, type ReportDays, type RolledLog } from '../../mail/store/report-days';
import type { EVENT_OUTCOMES } from '@mailer/nats/facts';

export type EventOutcome = (typeof EVENT_OUTCOMES)[number];

export interface EventDoc {
  _id: string; // eventId (the gateway's: derived from the idempotencyKey, else random)
  accountId: string;
  eventKey: string;
  /** Canonical address (the gateway lowercased it). */
  email: string;
  occurredAt: Date;
  /** When the gateway accepted it (reports count by this). */
  receivedAt: Date;
  /**
   * The free-form `properties` as JSON text, exactly as sent: member names such as `a.b` or `$x`
   * are not safe as stored field names, and nothing queries inside them.
   */
  propertiesJson: string;
  triggerAutomations: boolean;
  /** The consent sent with the event (signup of an unknown address), null when none. */
  consent: { source: string; givenAt: Date } | null;
  /** The double opt-in decision of the consent signup the event led to (an unknown address with consent); null: none. */
  consentDecision?: string | null;
  subscriberId: string | null;
  outcome: EventOutcome;
  runIds: string[];
  /**
   * The active automations whose trigger matched when the event was recorded (API-request trigger
   * on its eventKey). Kept so that the run engine can tell which runs an event should have started.
   */
  matchedAutomationIds: string[];
  /** When this service recorded it. */
  recordedAt: Date;
}

export const EVENTS = 'events';

const { Schema } = mongoose;

export const eventSchema = new Schema(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    eventKey: { type: String, required: true },
    email: { type: String, required: true },
    occurredAt: { type: Date, required: true },
    receivedAt: { type: Date, required: true },
    propertiesJson: { type: String, required: true },
    triggerAutomations: { type: Boolean, required: true },
    consent: { type: Schema.Types.Mixed, default: null },
    consentDecision: { type: String, default: null },
    subscriberId: { type: String, default: null },
    outcome: { type: String, required: true },
    runIds: { type: [String], default: [] },
    matchedAutomationIds: { type: [String], default: [] },
    recordedAt: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
// GET /events (newest first, optionally by eventKey or email) and the report's range scans.
eventSchema.index({ accountId: 1, receivedAt: -1, _id: -1 });
eventSchema.index({ accountId: 1, eventKey: 1, receivedAt: -1 });
eventSchema.index({ accountId: 1, email: 1, receivedAt: -1 });

/** The event log; an event is kept `retentionDays` (EVENT_RETENTION_DAYS) after it was received. */
export const eventCollection = (store: Store, retentionDays = 30): Collection<EventDoc> =>
  store.collection<EventDoc>(EVENTS, eventSchema, { expireAfter: { path: 'receivedAt', days: retentionDays }, countBy: 'accountId' });

/** The event report's series in the daily aggregates: all events, and those of one key. */
const RECEIVED = `${EVENTS}.receivedAt`;
const receivedSeries = (eventKey?: string) => (eventKey === undefined ? RECEIVED : `${RECEIVED}:${eventKey}`);

/** The event report's counts, rolled up into daily aggregates before the events go. */
export const rolledEvents = (events: Collection<EventDoc>): RolledLog<EventDoc> => ({
  name: EVENTS,
  collection: events,
  fields: ['receivedAt'],
  seriesOf: (e) => [receivedSeries(), receivedSeries(e.eventKey)],
});

export interface EventQuery {
  eventKey?: string;
  email?: string;
  pageNumber: number;
  pageSize: number;
}

/** One account's events; reports read the daily aggregates (`days`) where the events are rolled up. */
export function eventsOf(events: Collection<EventDoc>, accountId: string, days?: ReportDays) {
  return {
    /** Whether the event is recorded already (the cheap check before the work of recording it). */
    async exists(eventId: string): Promise<boolean> {
      return (await events.countDocuments({ _id: eventId, accountId })) > 0;
    },
    /**
     * Which of these events are recorded already (one read, for every batch of the consumer). No
     * projection: the ones found are few (redeliveries), and the embedded store reads whole documents
     * anyway, where a projection adds a query-engine set-up to every read.
     */
    async recorded(eventIds: string[]): Promise<Set<string>> {
      return new Set((await events.find({ _id: { $in: eventIds }, accountId })).map((e) => e._id));
    },
    /** Throws DuplicateKeyError when one of them is recorded already (the transaction then commits nothing). */
    async insertAll(docs: EventDoc[], tx: Transaction): Promise<void> {
      if (docs.some((d) => d.accountId !== accountId)) throw new Error('eventsOf.insertAll: an event belongs to another account');
      await events.insertMany(docs, { tx });
    },
    /** Throws DuplicateKeyError when the event is recorded already (the transaction then commits nothing). */
    async insert(doc: EventDoc, tx: Transaction): Promise<void> {
      if (doc.accountId !== accountId) throw new Error('eventsOf.insert: the event belongs to another account');
      await events.insertOne(doc, { tx });
    },
    get: (eventId: string): Promise<EventDoc | null> => events.findOne({ _id: eventId, accountId }),
    async list(q: EventQuery): Promise<{ items: EventDoc[]; totalItems: number }> {
      const filter: AccountFilter = { accountId };
      if (q.eventKey !== undefined) filter.eventKey = q.eventKey;
      if (q.email !== undefined) filter.email = q.email;
      const [items, totalItems] = await Promise.all([
        events.find(filter, { sort: { receivedAt: -1, _id: -1 }, skip: (q.pageNumber - 1) * q.pageSize, limit: q.pageSize }),
        events.countDocuments(filter),
      ]);
      return { items, totalItems };
    },
    /** Events received per bucket of the boundaries (boundaries.length - 1 counts), of one key or all. */
    countPerBucket(boundaries: Date[], eventKey?: string): Promise<number[]> {
      const fromLog = async (b: Date[]) => {
        const pipeline = bucketCountPipeline(accountId, 'receivedAt', b);
        // the first stage is the range $match; one key narrows it to the {accountId, eventKey, receivedAt} index
        if (eventKey !== undefined) pipeline[0] = { $match: { ...(pipeline[0].$match as Record<string, unknown>), eventKey } };
        return countsPerBucket(await events.aggregate(pipeline), b);
      };
      return days ? countPerBucketWithDays(days, EVENTS, accountId, receivedSeries(eventKey), boundaries, fromLog) : fromLog(boundaries);
    },
    /** The event keys received in [from, to), sorted: those still in the log, and those in the aggregates. */
    async keysReceived(from: Date, to: Date): Promise<string[]> {
      const [rows, rolled] = await Promise.all([
        events.aggregate<{ _id: string }>([{ $match: { accountId, receivedAt: { $gte: from, $lt: to } } }, { $group: { _id: '$eventKey' } }]),
        days ? seriesWithDays(days, EVENTS, accountId, `${RECEIVED}:`, from, to) : [],
      ]);
      return [...new Set([...rows.map((r) => r._id), ...rolled.map((s) => s.slice(RECEIVED.length + 1))])].sort();
    },
  };
}
export type EventRepository = ReturnType<typeof eventsOf>;
