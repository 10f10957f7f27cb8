import { conflict } from '@mailer/kit';
import { bucketCountPipeline, countsPerBucket } from '@mailer/reports';
import { DuplicateKeyError, isoTime, mongoose, type Store, type Transaction } from '@mailer/store';
import { SUBSCRIBER_STATUSES, type SubscriberStatus } from '../domain/subscriber';
import type { Consent, OptOut, StoredValue, SubscriberState } from '../domain/types';
import { ConcurrentChange } from './atomic';
import { outboxRepository } from '@mailer/nats';

/** An opt-out as stored: its time a Date (the domain's OptOut carries the ISO string). */
export type StoredOptOut = Omit<OptOut, 'at'> & { at: Date };
/** A consent as stored: its time a Date (the domain's Consent carries the ISO string). */
export type StoredConsent = Omit<Consent, 'at'> & { at: Date };

/**
 * A subscriber as stored. Instants are BSON Dates, as in every service (ranges and sorts compare
 * them as times); toState/toDoc turn them into the ISO strings of the domain, the API and the facts.
 */
export interface SubscriberDoc {
  _id: string;
  accountId: string;
  email: string;
  firstName: string | null;
  status: SubscriberStatus;
  tags: string[];
  topicIds: string[];
  optOuts?: StoredOptOut[];
  /** fieldId -> bare value (the field's type gives the kind); absent when empty. */
  fields?: Record<string, StoredValue>;
  registeredAt: Date;
  consent?: StoredConsent;
  /** When the subscriber last went UNCONFIRMED -> ACTIVE (any path); the subscriber report counts by it. */
  confirmedAt?: Date;
  /** When the status last became UNSUBSCRIBED (any path); the subscriber report counts by it. */
  unsubscribedAt?: Date;
  updatedAt: Date;
  version: number;
}

const optOutSchema = new mongoose.Schema<StoredOptOut>(
  { topicId: { type: String, required: true }, at: { type: Date, required: true }, source: { type: String, required: true } },
  { _id: false },
);

const consentSchema = new mongoose.Schema<StoredConsent>(
  // one of formId (a form signup) and eventId (a custom event's consent)
  { text: { type: String, required: true }, formId: { type: String }, eventId: { type: String }, at: { type: Date, required: true } },
  { _id: false },
);

export const subscriberSchema = new mongoose.Schema<SubscriberDoc>(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    email: { type: String, required: true },
    firstName: { type: String, default: null },
    status: { type: String, required: true, enum: SUBSCRIBER_STATUSES },
    // empty collections are not stored (absent = empty): a million subscribers, a few bytes each
    tags: { type: [String], default: undefined },
    topicIds: { type: [String], default: undefined },
    optOuts: { type: [optOutSchema], default: undefined },
    fields: { type: mongoose.Schema.Types.Mixed },
    registeredAt: { type: Date, required: true },
    consent: { type: consentSchema, default: undefined },
    confirmedAt: { type: Date, default: undefined },
    unsubscribedAt: { type: Date, default: undefined },
    updatedAt: { type: Date, required: true },
    version: { type: Number, required: true },
  },
  { versionKey: false },
);
// Email addresses are unique per account; other accounts may hold the same address.
subscriberSchema.index({ accountId: 1, email: 1 }, { unique: true });
// Default list order (registeredAt, then id) and the list filters.
subscriberSchema.index({ accountId: 1, registeredAt: 1, _id: 1 });
subscriberSchema.index({ accountId: 1, status: 1, registeredAt: 1 });
// Audience pages (ListAudience): ACTIVE subscribers in id order after a cursor, a range walk.
subscriberSchema.index({ accountId: 1, status: 1, _id: 1 });
// A broadcast's audience (ListAudience with_excluded): every subscriber in id order after a cursor.
subscriberSchema.index({ accountId: 1, _id: 1 });
// Search matches first names case-insensitively (a lowercased copy per subscriber would cost ~40 MB
// per million subscribers on the embedded store, which keeps every document in memory).
subscriberSchema.index({ accountId: 1, firstName: 1 });
// The subscriber report counts confirmations and unsubscriptions per period (sparse: most have none).
subscriberSchema.index({ accountId: 1, confirmedAt: 1 }, { sparse: true });
subscriberSchema.index({ accountId: 1, unsubscribedAt: 1 }, { sparse: true });
subscriberSchema.index({ accountId: 1, tags: 1 });
subscriberSchema.index({ accountId: 1, topicIds: 1 });

export function toState(doc: SubscriberDoc): SubscriberState {
  return {
    id: doc._id,
    email: doc.email,
    firstName: doc.firstName ?? null,
    status: doc.status,
    tags: doc.tags ?? [],
    topicIds: doc.topicIds ?? [],
    optOuts: (doc.optOuts ?? []).map((o) => ({ topicId: o.topicId, at: isoTime(o.at), source: o.source })),
    fields: doc.fields ?? {},
    registeredAt: isoTime(doc.registeredAt),
    ...(doc.consent ? { consent: consentOf(doc.consent) } : {}),
    version: doc.version ?? 1,
  };
}

function consentOf(c: StoredConsent): Consent {
  return { text: c.text, ...(c.formId ? { formId: c.formId } : {}), ...(c.eventId ? { eventId: c.eventId } : {}), at: isoTime(c.at) };
}

const COLLECTIONS = ['tags', 'topicIds', 'optOuts', 'fields'] as const;
const isEmpty = (v: unknown[] | Record<string, unknown>): boolean => (Array.isArray(v) ? v.length === 0 : Object.keys(v).length === 0);

export function toDoc(accountId: string, s: SubscriberState, now: string): SubscriberDoc {
  const doc: SubscriberDoc = {
    _id: s.id,
    accountId,
    email: s.email,
    firstName: s.firstName,
    status: s.status,
    tags: s.tags,
    topicIds: s.topicIds,
    optOuts: s.optOuts.map((o) => ({ ...o, at: new Date(o.at) })),
    fields: s.fields,
    registeredAt: new Date(s.registeredAt),
    updatedAt: new Date(now),
    version: s.version,
  };
  if (s.consent) doc.consent = { ...s.consent, at: new Date(s.consent.at) };
  for (const c of COLLECTIONS) if (isEmpty(doc[c] ?? [])) delete doc[c];
  return doc;
}

/**
 * The status-change times a write from `before` to `after` records: confirmedAt when it confirms
 * (UNCONFIRMED -> ACTIVE), unsubscribedAt when the status becomes UNSUBSCRIBED. Every status change of
 * every path (API, form confirmation, one-click unsubscribe, delivery status) goes through write().
 */
export function statusTimes(before: SubscriberStatus, after: SubscriberStatus, now: string): Pick<SubscriberDoc, 'confirmedAt' | 'unsubscribedAt'> {
  if (before === 'UNCONFIRMED' && after === 'ACTIVE') return { confirmedAt: new Date(now) };
  if (before !== 'UNSUBSCRIBED' && after === 'UNSUBSCRIBED') return { unsubscribedAt: new Date(now) };
  return {};
}

/** The update document that makes a stored subscriber equal to `s` (+ status-change times): empty collections are unset. */
function replacement(before: SubscriberState, s: SubscriberState, now: string): Record<string, unknown> {
  const { _id, accountId, registeredAt, ...fields } = toDoc('', s, now);
  const set = { ...fields, ...statusTimes(before.status, s.status, now) };
  const unset: Record<string, ''> = {};
  for (const c of COLLECTIONS) if (!(c in set)) unset[c] = '';
  return Object.keys(unset).length ? { $set: set, $unset: unset } : { $set: set };
}

/** Per-account subscriber counts by status, kept in the same transaction as every subscriber write. */
export interface StatusCountsDoc {
  _id: string;
  accountId: string;
  counts: Record<SubscriberStatus, number>;
}

export const statusCountsSchema = new mongoose.Schema<StatusCountsDoc>(
  { _id: { type: String, required: true }, accountId: { type: String, required: true }, counts: { type: mongoose.Schema.Types.Mixed, required: true } },
  { versionKey: false, minimize: false },
);

const zeroCounts = (): Record<SubscriberStatus, number> => Object.fromEntries(SUBSCRIBER_STATUSES.map((s) => [s, 0])) as Record<SubscriberStatus, number>;

export interface SubscriberQuery {
  status?: SubscriberStatus;
  tagId?: string;
  topicId?: string;
  /** Anchored, escaped, lowercase regex source: matched against the canonical email, and the first name ignoring case. */
  prefix?: string;
}

/** One unit of subscriber writes plus the events they emit, committed together. */
export interface SubscriberWrites {
  inserts?: SubscriberState[];
  /** `before.version` guards each update (optimistic concurrency). */
  updates?: Array<{ before: SubscriberState; after: SubscriberState }>;
  deletes?: SubscriberState[];
  events?: Array<{ subject: string; payload: unknown }>;
}

/** The subscriber times the subscriber report counts by. */
export type SubscriberReportField = 'registeredAt' | 'confirmedAt' | 'unsubscribedAt';

/** A query filter of one account: helpers that take a filter take this one, so it cannot lack the account. */
type AccountFilter = { accountId: string } & Record<string, unknown>;

/** Subscribers of one account: every method takes the accountId (none reads or writes across accounts). */
export function subscriberRepository(store: Store) {
  const subscribers = store.collection<SubscriberDoc>('subscribers', subscriberSchema);
  const outbox = outboxRepository(store);
  const statusCounts = store.collection<StatusCountsDoc>('subscriber_status_counts', statusCountsSchema);

  /** Counts every status by testing each subscriber of the account (what the counters save). */
  async function countByStatus(filter: AccountFilter): Promise<Record<SubscriberStatus, number>> {
    const perStatus = await Promise.all(SUBSCRIBER_STATUSES.map((s) => subscribers.countDocuments({ ...filter, status: s })));
    return Object.fromEntries(SUBSCRIBER_STATUSES.map((s, i) => [s, perStatus[i]])) as Record<SubscriberStatus, number>;
  }

  /**
   * Applies the status changes of one write to the account's counters (in its transaction). An
   * account without counters yet (data written before they existed) gets them counted first.
   */
  async function adjustCounts(tx: Transaction, accountId: string, w: SubscriberWrites): Promise<void> {
    const delta = zeroCounts();
    for (const s of w.inserts ?? []) delta[s.status]++;
    for (const s of w.deletes ?? []) delta[s.status]--;
    for (const { before, after } of w.updates ?? []) {
      if (before.status === after.status) continue;
      delta[before.status]--;
      delta[after.status]++;
    }
    const changed = SUBSCRIBER_STATUSES.filter((s) => delta[s] !== 0);
    if (changed.length === 0) return;
    const current = await statusCounts.findOne({ _id: accountId, accountId });
    if (current) {
      const res = await statusCounts.updateOne({ _id: accountId, accountId }, { $inc: Object.fromEntries(changed.map((s) => [`counts.${s}`, delta[s]])) }, { tx });
      if (res.matchedCount !== 1) throw new ConcurrentChange('status counts');
      return;
    }
    const counts = await countByStatus({ accountId });
    for (const s of SUBSCRIBER_STATUSES) counts[s] += delta[s];
    try {
      await statusCounts.insertOne({ _id: accountId, accountId, counts }, { tx });
    } catch (err) {
      if (err instanceof DuplicateKeyError) throw new ConcurrentChange('status counts');
      throw err;
    }
  }

  /** Filters of a list query, without its status: statusCounts are counted over these. */
  function baseFilter(accountId: string, q: SubscriberQuery): AccountFilter {
    const filter: AccountFilter = { accountId };
    if (q.tagId) filter.tags = q.tagId;
    if (q.topicId) filter.topicIds = q.topicId;
    if (q.prefix) filter.$or = [{ email: { $regex: q.prefix } }, { firstName: { $regex: q.prefix, $options: 'i' } }];
    return filter;
  }

  return {
    async get(accountId: string, id: string): Promise<SubscriberState | null> {
      const doc = await subscribers.findOne({ accountId, _id: id });
      return doc ? toState(doc) : null;
    },

    /**
     * How many of the account's subscribers have `field` in each bucket [boundaries[i], boundaries[i + 1])
     * (the subscriber report; each field a Date indexed with the account).
     */
    async countPerBucket(accountId: string, field: SubscriberReportField, boundaries: Date[]): Promise<number[]> {
      const pipeline = bucketCountPipeline(accountId, field, boundaries);
      return countsPerBucket(await subscribers.aggregate(pipeline), boundaries);
    },

    /** How many subscribers the account has (any status): the signup limit counts these. */
    async count(accountId: string): Promise<number> {
      return subscribers.countDocuments({ accountId });
    },

    async getByEmail(accountId: string, email: string): Promise<SubscriberState | null> {
      const doc = await subscribers.findOne({ accountId, email });
      return doc ? toState(doc) : null;
    },

    /**
     * Subscribers of the account holding any of the emails, by email: one `$in` query on the
     * (accountId, email) index (a sync request, a batch of lookups), which reads the matches only.
     */
    async findByEmails(accountId: string, emails: string[]): Promise<Map<string, SubscriberState>> {
      if (emails.length === 0) return new Map();
      const docs = await subscribers.find({ accountId, email: { $in: emails } });
      return new Map(docs.map((d) => [d.email, toState(d)]));
    },

    async findByIds(accountId: string, ids: string[]): Promise<SubscriberState[]> {
      if (ids.length === 0) return [];
      return (await subscribers.find({ accountId, _id: { $in: ids } })).map(toState);
    },

    /** Commits inserts, guarded updates, deletes and their outbox events in the given transaction. */
    async write(tx: Transaction, accountId: string, w: SubscriberWrites, now: string): Promise<void> {
      try {
        if (w.inserts?.length) await subscribers.insertMany(w.inserts.map((s) => toDoc(accountId, s, now)), { tx });
        if (w.updates?.length) {
          const res = await subscribers.bulkWrite(
            w.updates.map(({ before, after }) => ({
              updateOne: { filter: { accountId, _id: before.id, version: before.version }, update: replacement(before, after, now) },
            })),
            { tx },
          );
          if (res.matchedCount !== w.updates.length) throw new ConcurrentChange('subscriber');
        }
        if (w.deletes?.length) {
          const res = await subscribers.bulkWrite(
            w.deletes.map((s) => ({ deleteOne: { filter: { accountId, _id: s.id, version: s.version } } })),
            { tx },
          );
          if (res.deletedCount !== w.deletes.length) throw new ConcurrentChange('subscriber');
        }
      } catch (err) {
        if (err instanceof DuplicateKeyError) throw conflict('subscriber_email_exists', `a subscriber with email ${String(err.key.email ?? '')} already exists`);
        throw err;
      }
      await adjustCounts(tx, accountId, w);
      await outbox.record(tx, w.events ?? []);
    },


    /** A new topic with enrollExistingSubscribers: every subscriber of the account not opted out of it joins it. */
    async enrollInTopic(tx: Transaction, accountId: string, topicId: string, now: string): Promise<number> {
      const res = await subscribers.updateMany(
        { accountId, topicIds: { $ne: topicId }, 'optOuts.topicId': { $ne: topicId } },
        { $push: { topicIds: { $each: [topicId], $sort: 1 } }, $inc: { version: 1 }, $set: { updatedAt: new Date(now) } },
        { tx },
      );
      return res.modifiedCount;
    },

    /** Takes a deleted topic out of every subscriber's topics and opt-outs (one topic.deleted fact covers them). */
    async removeTopic(tx: Transaction, accountId: string, topicId: string, now: string): Promise<number> {
      const res = await subscribers.updateMany(
        { accountId, $or: [{ topicIds: topicId }, { 'optOuts.topicId': topicId }] },
        { $pull: { topicIds: topicId, optOuts: { topicId } }, $inc: { version: 1 }, $set: { updatedAt: new Date(now) } },
        { tx },
      );
      return res.modifiedCount;
    },

    countInTopic(accountId: string, topicId: string): Promise<number> {
      return subscribers.countDocuments({ accountId, topicIds: topicId });
    },

    /** Takes a deleted tag off every subscriber of the account (one tag.deleted fact covers them). */
    async removeTag(tx: Transaction, accountId: string, tagId: string, now: string): Promise<number> {
      const res = await subscribers.updateMany({ accountId, tags: tagId }, { $pull: { tags: tagId }, $inc: { version: 1 }, $set: { updatedAt: new Date(now) } }, { tx });
      return res.modifiedCount;
    },

    countWithTag(accountId: string, tagId: string): Promise<number> {
      return subscribers.countDocuments({ accountId, tags: tagId });
    },

    /** Removes a deleted field's values from every subscriber of the account (one field.deleted fact covers them). */
    async removeFieldValues(tx: Transaction, accountId: string, fieldId: string, now: string): Promise<number> {
      const path = `fields.${fieldId}`;
      const res = await subscribers.updateMany({ accountId, [path]: { $exists: true } }, { $unset: { [path]: '' }, $inc: { version: 1 }, $set: { updatedAt: new Date(now) } }, { tx });
      return res.modifiedCount;
    },

    countWithFieldValue(accountId: string, fieldId: string): Promise<number> {
      return subscribers.countDocuments({ accountId, [`fields.${fieldId}`]: { $exists: true } });
    },

    /**
     * Up to `limit` ACTIVE subscribers with ids above `after`, in id order (a send's audience): a
     * keyset page, so no skip and no count. With a topic, only its subscribers and never one opted
     * out of it (opting out already takes the topic away; the second test keeps that true here).
     */
    async activeAfter(accountId: string, q: { topicId?: string; after?: string }, limit: number): Promise<SubscriberState[]> {
      const filter: AccountFilter = { accountId, status: 'ACTIVE' };
      if (q.topicId) Object.assign(filter, { topicIds: q.topicId, 'optOuts.topicId': { $ne: q.topicId } });
      if (q.after) filter._id = { $gt: q.after };
      return (await subscribers.find(filter, { sort: { _id: 1 }, limit })).map(toState);
    },

    /** Up to `limit` subscribers of any status with ids above `after`, in id order (a broadcast's whole audience). */
    async allAfter(accountId: string, after: string, limit: number): Promise<SubscriberState[]> {
      const filter: AccountFilter = { accountId };
      if (after) filter._id = { $gt: after };
      return (await subscribers.find(filter, { sort: { _id: 1 }, limit })).map(toState);
    },

    async list(accountId: string, q: SubscriberQuery, skip: number, limit: number) {
      const base = baseFilter(accountId, q);
      const filter = q.status ? { ...base, status: q.status } : base;
      // statusCounts are over the filters except status. Without other filters they are the
      // account's counters; with them, one count per status (a $group aggregate would copy every
      // matching document on the embedded store; counts only test them).
      const unfiltered = Object.keys(base).length === 1;
      const kept = unfiltered ? await statusCounts.findOne({ _id: accountId, accountId }) : null;
      const counts = kept ? { ...zeroCounts(), ...kept.counts } : unfiltered && (await subscribers.countDocuments({ accountId })) === 0 ? zeroCounts() : await countByStatus(base);
      const total = q.status ? counts[q.status] : SUBSCRIBER_STATUSES.reduce((a, s) => a + counts[s], 0);
      const items = await page(filter, total, skip, limit);
      return { items: items.map(toState), total, counts };
    },
  };

  /**
   * A page in (registeredAt, _id) order. Past the middle the page is read backwards from the end
   * (reverse order, skip counted from the end): the embedded store sorts every document up to
   * skip + limit, so this halves the work for deep pages; on MongoDB it is the same index walk.
   */
  async function page(filter: AccountFilter, total: number, skip: number, limit: number): Promise<SubscriberDoc[]> {
    if (skip >= total) return [];
    if (skip + limit / 2 <= total / 2) return subscribers.find(filter, { sort: { registeredAt: 1, _id: 1 }, skip, limit });
    const end = Math.min(total, skip + limit);
    const docs = await subscribers.find(filter, { sort: { registeredAt: -1, _id: -1 }, skip: total - end, limit: end - skip });
    return docs.reverse();
  }
}
export type SubscriberRepository = ReturnType<typeof subscriberRepository>;
