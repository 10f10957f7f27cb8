import { DuplicateKeyError, mongoose, type Store } from '@mailer/store';
import { outboxRecord, outboxSchema } from '@mailer/nats';
import { conflict } from '@mailer/kit';
import type { SubscriberStatus } from '../domain/subscriber';
import { SUBSCRIBER_STATUSES } from '../domain/subscriber';

/** A subscriber as stored. Instants are ISO strings: they sort correctly and survive any adapter. */
export interface SubscriberDoc {
  _id: string;
  accountId: string;
  email: string;
  firstName: string | null;
  /** Lowercased first name, for case-insensitive prefix search that an index can serve. */
  firstNameLower: string | null;
  status: SubscriberStatus;
  tags: string[];
  topicIds: string[];
  registeredAt: string;
  updatedAt: string;
}

export const subscriberSchema = new mongoose.Schema<SubscriberDoc>(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    email: { type: String, required: true },
    firstName: { type: String, default: null },
    firstNameLower: { type: String, default: null },
    status: { type: String, required: true, enum: SUBSCRIBER_STATUSES },
    tags: { type: [String], default: [] },
    topicIds: { type: [String], default: [] },
    registeredAt: { type: String, required: true },
    updatedAt: { type: String, required: true },
  },
  { versionKey: false },
);
// Email addresses are unique per account; other accounts may hold the same address.
subscriberSchema.index({ accountId: 1, email: 1 }, { unique: true });
// Default list order (registeredAt, then id) and the status filter.
subscriberSchema.index({ accountId: 1, registeredAt: 1, _id: 1 });
subscriberSchema.index({ accountId: 1, status: 1, registeredAt: 1 });
subscriberSchema.index({ accountId: 1, firstNameLower: 1 });

export interface SubscriberQuery {
  status?: SubscriberStatus;
  tagId?: string;
  topicId?: string;
  /** Anchored, escaped regex source matched against email or first name. */
  prefix?: string;
}

export function subscriberRepository(store: Store) {
  const subscribers = store.collection<SubscriberDoc>('subscribers', subscriberSchema);
  const outbox = store.collection('outbox', outboxSchema);

  /** Filters of a list query, without its status: statusCounts are counted over these. */
  function baseFilter(accountId: string, q: SubscriberQuery): Record<string, unknown> {
    const filter: Record<string, unknown> = { accountId };
    if (q.tagId) filter.tags = q.tagId;
    if (q.topicId) filter.topicIds = q.topicId;
    if (q.prefix) filter.$or = [{ email: { $regex: q.prefix } }, { firstNameLower: { $regex: q.prefix } }];
    return filter;
  }

  return {
    /** Inserts the subscriber and its domain event in one atomic write (outbox). */
    async insert(doc: SubscriberDoc, event: { subject: string; payload: unknown }): Promise<void> {
      try {
        await store.transaction(async (tx) => {
          await subscribers.insertOne(doc, { tx });
          await outbox.insertOne(outboxRecord(event.subject, event.payload), { tx });
        });
      } catch (err) {
        if (err instanceof DuplicateKeyError) {
          throw conflict('subscriber_email_exists', `a subscriber with email ${doc.email} already exists`);
        }
        throw err;
      }
    },

    get(accountId: string, id: string): Promise<SubscriberDoc | null> {
      return subscribers.findOne({ accountId, _id: id });
    },

    async list(accountId: string, q: SubscriberQuery, skip: number, limit: number) {
      const base = baseFilter(accountId, q);
      const filter = q.status ? { ...base, status: q.status } : base;
      const [items, total, grouped] = await Promise.all([
        subscribers.find(filter, { sort: { registeredAt: 1, _id: 1 }, skip, limit }),
        subscribers.countDocuments(filter),
        subscribers.aggregate<{ _id: SubscriberStatus; n: number }>([{ $match: base }, { $group: { _id: '$status', n: { $sum: 1 } } }]),
      ]);
      const counts = Object.fromEntries(SUBSCRIBER_STATUSES.map((s) => [s, 0])) as Record<SubscriberStatus, number>;
      for (const g of grouped) counts[g._id] = g.n;
      return { items, total, counts };
    },
  };
}
export type SubscriberRepository = ReturnType<typeof subscriberRepository>;
