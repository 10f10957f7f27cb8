// Webhook deliveries (collection 'webhook_deliveries'): one per subscription and fact (unique), with the
// log of its attempts (API.md "Webhooks", GET .../deliveries). The record is the truth of a delivery:
// the JOBS message only wakes a worker, which claims the record before it posts (`claimedUntil`), so two
// workers never attempt one delivery at once, and a worker killed mid-attempt leaves a claim that expires
// and a due record that the due-time scan picks up again. Every query filters by accountId first, except
// the due-time scan, which is cross-account by nature (named so).
import { DuplicateKeyError, mongoose, type Collection, type Store, type Transaction } from '@mailer/store';

const { Schema } = mongoose;

export const DELIVERY_STATUSES = ['PENDING', 'DELIVERED', 'FAILED', 'RETRYING'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface AttemptRecord {
  at: Date;
  /** The HTTP status, null when no response came (timeout, refused, address not allowed). */
  statusCode: number | null;
  durationMs: number;
  /** Why the attempt failed; null on success. */
  error: string | null;
  /** The first 2 KiB of the response body (UTF-8, lossy); null when no response came. */
  responseBody: string | null;
}

export interface DeliveryDoc {
  _id: string; // deliveryId
  accountId: string;
  subscriptionId: string;
  /** The body's `id` and the webhook-id header: the same on every attempt (receivers de-duplicate on it). */
  eventId: string;
  /** The webhook event (or webhook.test). */
  type: string;
  /** The exact body posted on every attempt (`{id, type, createdAt, data}`), so each attempt signs the same bytes. */
  body: string;
  status: DeliveryStatus;
  attempts: AttemptRecord[];
  /** Failed attempts since the delivery was created or redelivered: the position in the retry schedule. */
  failures: number;
  /** When the next attempt is due; null once DELIVERED or FAILED. */
  nextAttemptAt: Date | null;
  /** A worker's claim while it posts: no other worker attempts the delivery before this instant. */
  claimedUntil: Date;
  createdAt: Date;
}

const deliverySchema = new Schema(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    subscriptionId: { type: String, required: true },
    eventId: { type: String, required: true },
    type: { type: String, required: true },
    body: { type: String, required: true },
    status: { type: String, required: true, enum: DELIVERY_STATUSES },
    attempts: { type: [Schema.Types.Mixed], default: [] },
    failures: { type: Number, default: 0 },
    nextAttemptAt: { type: Date, default: null },
    claimedUntil: { type: Date, required: true },
    createdAt: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
// One delivery per subscription and fact.
deliverySchema.index({ accountId: 1, subscriptionId: 1, eventId: 1 }, { unique: true });
// GET .../deliveries: newest first, optionally by status.
deliverySchema.index({ accountId: 1, subscriptionId: 1, createdAt: -1 });
// The due-time scan.
deliverySchema.index({ nextAttemptAt: 1 });

/** The delivery log; a delivery and its attempts are kept `retentionDays` (WEBHOOK_DELIVERY_RETENTION_DAYS) after it was created. */
export const deliveryCollection = (store: Store, retentionDays = 30): Collection<DeliveryDoc> =>
  store.collection<DeliveryDoc>('webhook_deliveries', deliverySchema, { expireAfter: { path: 'createdAt', days: retentionDays } });

/** The epoch: `claimedUntil` of a record nobody holds. */
export const UNCLAIMED = new Date(0);

export interface DeliveryQuery {
  status?: DeliveryStatus;
  pageNumber: number;
  pageSize: number;
}

export function deliveryRepository(store: Store, retentionDays?: number) {
  const deliveries = deliveryCollection(store, retentionDays);
  return {
    get: (accountId: string, deliveryId: string): Promise<DeliveryDoc | null> => deliveries.findOne({ accountId, _id: deliveryId }),

    /** Creates the deliveries (in the caller's transaction, with their jobs); duplicates are a DuplicateKeyError. */
    async create(docs: DeliveryDoc[], tx: Transaction): Promise<void> {
      if (docs.length) await deliveries.insertMany(docs, { tx });
    },

    async list(accountId: string, subscriptionId: string, q: DeliveryQuery): Promise<{ items: DeliveryDoc[]; totalItems: number }> {
      const filter: Record<string, unknown> = { accountId, subscriptionId };
      if (q.status) filter.status = q.status;
      const [items, totalItems] = await Promise.all([
        deliveries.find(filter, { sort: { createdAt: -1, _id: -1 }, skip: (q.pageNumber - 1) * q.pageSize, limit: q.pageSize }),
        deliveries.countDocuments(filter),
      ]);
      return { items, totalItems };
    },

    /**
     * Takes the delivery for one attempt when it is due and nobody holds it; null otherwise (delivered,
     * failed, not due yet, or another worker's attempt is in flight). The claim outlives the request
     * timeout, so it only expires when its worker died.
     */
    claim: (accountId: string, deliveryId: string, now: Date, until: Date): Promise<DeliveryDoc | null> =>
      deliveries.findOneAndUpdate(
        { accountId, _id: deliveryId, status: { $in: ['PENDING', 'RETRYING'] }, nextAttemptAt: { $lte: now }, claimedUntil: { $lte: now } },
        { $set: { claimedUntil: until } },
        { returnDocument: 'after' },
      ),

    /** Records an attempt's outcome and releases the claim (only the claim's holder may: `claimedUntil` matches). */
    async settle(
      doc: Pick<DeliveryDoc, '_id' | 'accountId' | 'claimedUntil'>,
      attempt: AttemptRecord,
      next: { status: DeliveryStatus; nextAttemptAt: Date | null; failures: number },
    ): Promise<boolean> {
      const result = await deliveries.updateOne(
        { accountId: doc.accountId, _id: doc._id, claimedUntil: doc.claimedUntil },
        { $push: { attempts: attempt }, $set: { status: next.status, nextAttemptAt: next.nextAttemptAt, failures: next.failures, claimedUntil: UNCLAIMED } },
      );
      return result.matchedCount > 0;
    },

    /** Marks the delivery FAILED without an attempt (its subscription is gone or disabled). */
    async abandon(doc: Pick<DeliveryDoc, '_id' | 'accountId' | 'claimedUntil'>): Promise<void> {
      await deliveries.updateOne(
        { accountId: doc.accountId, _id: doc._id, claimedUntil: doc.claimedUntil },
        { $set: { status: 'FAILED', nextAttemptAt: null, claimedUntil: UNCLAIMED } },
      );
    },

    /** Redeliver: a new attempt, due now, with a fresh retry schedule (in the caller's transaction, with its job). */
    async reschedule(accountId: string, deliveryId: string, now: Date, tx: Transaction): Promise<boolean> {
      const result = await deliveries.updateOne(
        { accountId, _id: deliveryId },
        { $set: { status: 'RETRYING', nextAttemptAt: now, failures: 0 } },
        { tx },
      );
      return result.matchedCount > 0;
    },

    /**
     * Cross-account: deliveries due by `now` and not held, oldest due first, except those of the given
     * subscriptions (their in-flight bound is reached; they wait for the next scan).
     */
    dueAcrossAccounts: (now: Date, limit: number, skipSubscriptions: string[]): Promise<DeliveryDoc[]> =>
      deliveries.find(
        {
          nextAttemptAt: { $lte: now },
          claimedUntil: { $lte: now },
          ...(skipSubscriptions.length ? { subscriptionId: { $nin: skipSubscriptions } } : {}),
        },
        { sort: { nextAttemptAt: 1 }, limit, projection: { _id: 1, accountId: 1, subscriptionId: 1 } },
      ),
  };
}
export type DeliveryRepository = ReturnType<typeof deliveryRepository>;
export { DuplicateKeyError };
