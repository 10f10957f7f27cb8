// Webhook deliveries (collection 'webhook_deliveries'): one per subscription and fact (unique), with the
// log of its attempts (the API contract "Webhooks", GET .../deliveries). The record is the truth of a delivery:
// the JOBS message only wakes a worker, which claims the record before it posts (`claimedUntil`, and the
// claim's id `claimId`), so two workers never attempt one delivery at once, and a worker killed
// mid-attempt leaves a claim that expires and a due record that the due-time scan picks up again. Claims
// and outcomes are written in batches, one write each. Every query filters by accountId first, except
// the due-time scans and the claim of a batch, which are cross-account by nature (named so).
import { acrossAccounts, DuplicateKeyError, mongoose, type AccountFilter, type Collection, type Store, type Transaction } from '@mailer/store';

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
  /** Which claim holds it (null when none): only that claim's holder records the attempt. */
  claimId?: string | null;
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
    claimId: { type: String, default: null },
    createdAt: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
// One delivery per subscription and fact.
deliverySchema.index({ accountId: 1, subscriptionId: 1, eventId: 1 }, { unique: true });
// GET .../deliveries: newest first, optionally by status.
deliverySchema.index({ accountId: 1, subscriptionId: 1, createdAt: -1 });
// The due-time scan. Its other conditions are in the index too, so that SQLite tests them on index
// entries: a backlog of due deliveries already queued in memory (their subscriptions are skipped) is
// passed over without reading one document (~12x less CPU per scan at 20,000 due).
deliverySchema.index({ nextAttemptAt: 1, claimedUntil: 1, subscriptionId: 1 });

/** The delivery log; a delivery and its attempts are kept `retentionDays` (WEBHOOK_DELIVERY_RETENTION_DAYS) after it was created. */
export const deliveryCollection = (store: Store, retentionDays = 30): Collection<DeliveryDoc> =>
  store.collection<DeliveryDoc>('webhook_deliveries', deliverySchema, { expireAfter: { path: 'createdAt', days: retentionDays } });

/** The epoch: `claimedUntil` of a record nobody holds. */
export const UNCLAIMED = new Date(0);

/** What one attempt (or giving a delivery up) leaves in the record. */
export interface Settlement {
  accountId: string;
  deliveryId: string;
  claimId: string;
  /** Null: given up without an attempt (the subscription is gone or disabled). */
  attempt: AttemptRecord | null;
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
  failures: number;
}

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
      const filter: AccountFilter = { accountId, subscriptionId };
      if (q.status) filter.status = q.status;
      const [items, totalItems] = await Promise.all([
        deliveries.find(filter, { sort: { createdAt: -1, _id: -1 }, skip: (q.pageNumber - 1) * q.pageSize, limit: q.pageSize }),
        deliveries.countDocuments(filter),
      ]);
      return { items, totalItems };
    },

    /**
     * Takes, in one write, the deliveries among each group's ids (of one subscription) that are due and
     * held by nobody, for one attempt each under the claim `claimId` until `until`; answers them per
     * group (the others are delivered, failed, not due yet, or in another worker's attempt). The claim
     * outlives the request timeout, so it only expires when its worker died.
     *
     * By id across accounts (the ids come from this service's jobs and scan, never from a request):
     * naming the accounts too would let SQLite, before it has statistics, read a whole subscription's
     * deliveries through an account index instead of the ids through the unique one. Each claimed record
     * is checked against its group's account and subscription; one that does not match (none can) is
     * not attempted and its claim expires.
     */
    async claimAcrossAccounts(
      groups: Array<{ accountId: string; subscriptionId: string; deliveryIds: string[] }>,
      now: Date,
      until: Date,
      claimId: string,
    ): Promise<DeliveryDoc[][]> {
      const ids = groups.flatMap((g) => g.deliveryIds);
      const all = acrossAccounts(deliveries);
      await all.updateMany(
        { _id: { $in: ids }, status: { $in: ['PENDING', 'RETRYING'] }, nextAttemptAt: { $lte: now }, claimedUntil: { $lte: now } },
        { $set: { claimedUntil: until, claimId } },
      );
      const claimed = new Map((await all.find({ _id: { $in: ids }, claimId })).map((d) => [d._id, d]));
      return groups.map((g) =>
        g.deliveryIds.flatMap((id) => {
          const d = claimed.get(id);
          return d && d.accountId === g.accountId && d.subscriptionId === g.subscriptionId ? [d] : [];
        }),
      );
    },

    /**
     * Records attempts' outcomes (and deliveries given up without an attempt: `attempt` null) in one
     * write, releasing their claims; only a claim's holder may (`claimId` matches). Each update stands
     * alone (conditional on its claim), so the batch needs no transaction of its own: as a plain write
     * it shares the store's group commit with the claims written in the same turn.
     */
    async settle(outcomes: Settlement[]): Promise<void> {
      if (!outcomes.length) return;
      await deliveries.bulkWrite(
        outcomes.map((o) => ({
          updateOne: {
            filter: { accountId: o.accountId, _id: o.deliveryId, claimId: o.claimId },
            update: {
              ...(o.attempt ? { $push: { attempts: o.attempt } } : {}),
              $set: { status: o.status, nextAttemptAt: o.nextAttemptAt, failures: o.failures, claimedUntil: UNCLAIMED, claimId: null },
            },
          },
        })),
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
     * The ids of one subscription's deliveries due by `now` and not held, oldest due first (a lane
     * reading back what did not fit in memory). By subscription id across accounts (the id comes from
     * this service's own jobs), so that the read walks the due range of the due-time index and not
     * the subscription's whole history; each record's account is checked against the lane's.
     */
    async dueOfSubscription(accountId: string, subscriptionId: string, now: Date, limit: number): Promise<string[]> {
      const due = await acrossAccounts(deliveries).find(
        { nextAttemptAt: { $lte: now }, claimedUntil: { $lte: now }, subscriptionId },
        { sort: { nextAttemptAt: 1 }, limit, projection: { _id: 1, accountId: 1 } },
      );
      return due.filter((d) => d.accountId === accountId).map((d) => d._id);
    },

    /**
     * Cross-account: deliveries due by `now` and not held, oldest due first, except those of the given
     * subscriptions (their in-flight bound is reached; they wait for the next scan).
     */
    dueAcrossAccounts: (now: Date, limit: number, skipSubscriptions: string[]): Promise<DeliveryDoc[]> =>
      acrossAccounts(deliveries).find(
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
