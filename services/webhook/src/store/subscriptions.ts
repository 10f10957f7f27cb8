// Webhook subscriptions (collection 'webhook_subscriptions'), domain/subscription.ts plus `_id`.
// Every query filters by accountId first: one account never reads, changes or is delivered another's
// subscriptions. State changes made by deliveries (disable, markFailing, markHealthy) are single
// conditional updates so they never race a customer's PUT into an inconsistent record.
//
// The signing secrets (`secret`, `previousSecret`) are stored sealed (AES-256-GCM under a key derived
// from SECRET_SEALING_KEY, the account and subscription ids as associated data); the repository seals
// on write and opens on read, so the rest of the service sees clear secrets. A secret stored in
// clear by an older version, or sealed under a key now in SECRET_SEALING_KEY_PREVIOUS, is re-sealed
// under the current key when it is read, and all at once by resealAll (at start, and the operator's
// `reseal-secrets`).
import { SealedValueError, sealer, type Sealer } from '@mailer/tokens';
import { acrossAccounts, mongoose, type Store } from '@mailer/store';
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

/** How many opened secrets a repository keeps (oldest dropped first). */
const OPENED_SECRETS = 10_000;

/** The keyring of the signing secrets, from SECRET_SEALING_KEY and its previous values (newest first). */
export const secretKeyring = (current: Buffer, previous: readonly Buffer[] = []): Sealer => sealer([current, ...previous], 'webhook-signing-secret');

export function subscriptionRepository(store: Store, sealing: Sealer) {
  const subs = store.collection<SubscriptionDoc>(SUBSCRIPTIONS, subscriptionSchema);
  const context = (accountId: string, id: string) => `webhook-subscription ${accountId} ${id}`;
  const seal = (accountId: string, id: string, secret: string) => sealing.seal(secret, context(accountId, id));
  // Secrets opened under the current key, by record and sealed value: the delivery worker reads a
  // subscription per batch without decrypting again. A rotation or re-sealing stores another value, and
  // a value copied onto another record is another key here, so it still does not open there.
  const opened = new Map<string, string>();
  /** A stored secret in clear (`stale`: stored in clear or under a previous key). */
  const open = (doc: SubscriptionDoc, stored: string): { value: string; stale: boolean } => {
    if (!sealing.isSealed(stored)) return { value: stored, stale: true };
    const key = `${context(doc.accountId, doc._id)} ${stored}`;
    const known = opened.get(key);
    if (known !== undefined) return { value: known, stale: false };
    const result = sealing.unseal(stored, context(doc.accountId, doc._id));
    if (!result.stale) {
      if (opened.size >= OPENED_SECRETS) opened.delete(opened.keys().next().value!);
      opened.set(key, result.value);
    }
    return result;
  };

  /**
   * The subscription with its secrets in clear. Secrets stored in clear or under a previous key are
   * re-sealed under the current one first (conditional on what was read: a rotation racing it wins).
   */
  async function toSubscription(doc: SubscriptionDoc): Promise<Subscription> {
    const { _id, ...rest } = doc;
    const secret = open(doc, doc.secret);
    const previous = doc.previousSecret === null ? null : open(doc, doc.previousSecret);
    if (secret.stale || previous?.stale) {
      await subs.updateOne(
        { _id, accountId: doc.accountId, secret: doc.secret, previousSecret: doc.previousSecret },
        { $set: { secret: seal(doc.accountId, _id, secret.value), previousSecret: previous && seal(doc.accountId, _id, previous.value) } },
      );
    }
    return { id: _id, ...rest, secret: secret.value, previousSecret: previous?.value ?? null };
  }
  const one = async (accountId: string, id: string) => {
    const doc = await subs.findOne({ _id: id, accountId });
    return doc && toSubscription(doc);
  };
  const all = (docs: SubscriptionDoc[]) => Promise.all(docs.map(toSubscription));

  return {
    get: one,
    /** Oldest first. */
    async list(accountId: string): Promise<Subscription[]> {
      return all(await subs.find({ accountId }, { sort: { createdAt: 1, _id: 1 } }));
    },
    async create(sub: Subscription): Promise<Subscription> {
      const { id, ...rest } = sub;
      const previousSecret = sub.previousSecret === null ? null : seal(sub.accountId, id, sub.previousSecret);
      await subs.insertOne({ _id: id, ...rest, secret: seal(sub.accountId, id, sub.secret), previousSecret });
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
          secret: seal(accountId, id, secret),
          previousSecret: seal(accountId, id, open(current, current.secret).value),
          previousSecretExpiresAt: new Date(now.getTime() + PREVIOUS_SECRET_TTL_MS),
          updatedAt: now,
        };
        const doc = await subs.findOneAndUpdate({ _id: id, accountId, secret: current.secret }, { $set: set }, { returnDocument: 'after' });
        if (doc) return toSubscription(doc);
      }
    },

    /** The account's active subscriptions that receive `event` (naming it or `*`). */
    async activeMatching(accountId: string, event: WebhookEvent): Promise<Subscription[]> {
      return all(await subs.find({ accountId, active: true, event: { $in: [event, '*'] } }, { sort: { createdAt: 1, _id: 1 } }));
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

    /**
     * Re-seals, across all accounts, every secret stored in clear or under a previous key (a
     * maintenance scan: at start, and the operator's `reseal-secrets`). `failed`: subscriptions whose
     * secret no configured key opens (they cannot sign until that key is configured again).
     */
    async resealAll(): Promise<{ subscriptions: number; resealed: number; failed: string[] }> {
      let subscriptions = 0;
      let resealed = 0;
      const failed: string[] = [];
      // in batches: a start never holds every subscription of every account at once
      for await (const batch of acrossAccounts(subs).scan({})) {
        for (const doc of batch) {
          subscriptions++;
          try {
            const stale = [doc.secret, doc.previousSecret].some((s) => s !== null && open(doc, s).stale);
            if (!stale) continue;
            await toSubscription(doc);
            resealed++;
          } catch (err) {
            if (!(err instanceof SealedValueError)) throw err;
            failed.push(doc._id);
          }
        }
      }
      return { subscriptions, resealed, failed };
    },
  };
}
export type SubscriptionRepository = ReturnType<typeof subscriptionRepository>;
