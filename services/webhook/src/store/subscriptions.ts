// Webhook subscriptions (collection 'webhook_subscriptions'), domain/subscription.ts plus `_id`.
// Every query filters by accountId first: one account never reads, changes or is delivered another's
// subscriptions. State changes made by deliveries (disable, markFailing, markHealthy) are single
// conditional updates so they never race a customer's PUT into an inconsistent record.
import { mongoose, type Store } from '@mailer/store';
import { PREVIOUS_SECRET_TTL_MS, type DisabledReason, type Subscription, type SubscriptionChanges } from '../domain/subscription';
import type { WebhookEvent } from '../domain/webhook-events';

const { Schema } = mongoose;

export interface SubscriptionDoc extends Omit<Subscription, 'id'> {
  _id: string;
}

export const SUBSCRIPTIONS = 'webhook_subscriptions';

export const subscriptionSchema = new Schema(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    targetUrl: { type: String, required: true },
    event: { type: String, required: true },
    deliveryContentType: { type: String, required: true, enum: ['application/json', 'text/plain'] },
    active: { type: Boolean, required: true },
    secret: { type: String, required: true },
    previousSecret: { type: String, default: null },
    previousSecretExpiresAt: { type: Date, default: null },
    disabledReason: { type: String, default: null },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
    failingSince: { type: Date, default: null },
  },
  { versionKey: false, minimize: false },
);
subscriptionSchema.index({ accountId: 1, createdAt: 1 });
// Fan-out: the account's active subscriptions for one event (or '*').
subscriptionSchema.index({ accountId: 1, active: 1, event: 1 });

const toSubscription = ({ _id, ...rest }: SubscriptionDoc): Subscription => ({ id: _id, ...rest });

export function subscriptionRepository(store: Store) {
  const subs = store.collection<SubscriptionDoc>(SUBSCRIPTIONS, subscriptionSchema);
  const one = async (accountId: string, id: string) => {
    const doc = await subs.findOne({ _id: id, accountId });
    return doc && toSubscription(doc);
  };

  return {
    get: one,
    /** Oldest first. */
    async list(accountId: string): Promise<Subscription[]> {
      return (await subs.find({ accountId }, { sort: { createdAt: 1, _id: 1 } })).map(toSubscription);
    },
    async create(sub: Subscription): Promise<Subscription> {
      const { id, ...rest } = sub;
      await subs.insertOne({ _id: id, ...rest });
      return sub;
    },

    /**
     * Applies a PUT; null when the subscription does not exist. `active: true` on an inactive
     * subscription re-enables it fresh: disabledReason and the failing state are cleared, so old
     * failures never count towards the 5 days again. `active: false` disables it without a reason.
     */
    async update(accountId: string, id: string, changes: SubscriptionChanges): Promise<Subscription | null> {
      const { active, ...set } = changes;
      if (active === undefined) {
        const doc = await subs.findOneAndUpdate({ _id: id, accountId }, { $set: set }, { returnDocument: 'after' });
        return doc && toSubscription(doc);
      }
      if (active) {
        // Only an inactive record is reset; an already active one keeps its failing state.
        await subs.updateOne({ _id: id, accountId, active: false }, { $set: { active: true, disabledReason: null, failingSince: null } });
      } else {
        await subs.updateOne({ _id: id, accountId }, { $set: { active: false } });
      }
      const doc = await subs.findOneAndUpdate({ _id: id, accountId }, { $set: set }, { returnDocument: 'after' });
      return doc && toSubscription(doc);
    },

    /** False when it did not exist. */
    async delete(accountId: string, id: string): Promise<boolean> {
      return (await subs.deleteOne({ _id: id, accountId })) > 0;
    },

    /**
     * Replaces the secret; the old one keeps signing for 24 h (a rotation during an earlier overlap
     * drops the older secret). Conditional on the secret read, so two racing rotations cannot both
     * keep "their" previous secret. Null when the subscription does not exist.
     */
    async rotateSecret(accountId: string, id: string, secret: string, now: Date): Promise<Subscription | null> {
      for (;;) {
        const current = await subs.findOne({ _id: id, accountId });
        if (!current) return null;
        const set = {
          secret,
          previousSecret: current.secret,
          previousSecretExpiresAt: new Date(now.getTime() + PREVIOUS_SECRET_TTL_MS),
          updatedAt: now,
        };
        const doc = await subs.findOneAndUpdate({ _id: id, accountId, secret: current.secret }, { $set: set }, { returnDocument: 'after' });
        if (doc) return toSubscription(doc);
      }
    },

    /** The account's active subscriptions that receive `event` (naming it or `*`). */
    async activeMatching(accountId: string, event: WebhookEvent): Promise<Subscription[]> {
      const docs = await subs.find({ accountId, active: true, event: { $in: [event, '*'] } }, { sort: { createdAt: 1, _id: 1 } });
      return docs.map(toSubscription);
    },

    /** Disables an active subscription with a reason (410, 5 days of failures); false when it was not active. */
    async disable(accountId: string, id: string, reason: DisabledReason, now: Date): Promise<boolean> {
      const res = await subs.updateOne({ _id: id, accountId, active: true }, { $set: { active: false, disabledReason: reason, updatedAt: now } });
      return res.modifiedCount > 0;
    },

    /**
     * Records a failed delivery: failingSince becomes `at` unless it is already set (the first failure
     * since the last success counts). Answers the subscription after it, null when gone.
     */
    async markFailing(accountId: string, id: string, at: Date): Promise<Subscription | null> {
      await subs.updateOne({ _id: id, accountId, failingSince: null }, { $set: { failingSince: at } });
      return one(accountId, id);
    },

    /** Records a successful delivery: the subscription is no longer failing. */
    async markHealthy(accountId: string, id: string): Promise<void> {
      await subs.updateOne({ _id: id, accountId, failingSince: { $ne: null } }, { $set: { failingSince: null } });
    },
  };
}
export type SubscriptionRepository = ReturnType<typeof subscriptionRepository>;
