// Sender profiles (collection 'sender_profiles'): who a mail is from (the API contract "Sender profiles").
//
// Default rule: exactly one default per account once any profile exists. The store enforces "at most
// one" with a unique index on accountId over the default profiles only (partial index), so two
// concurrent requests can never both leave a default; the repository keeps "at least one" by making
// a profile the default whenever the account has none, and by moving the flag (unset old, set new)
// or promoting a successor inside one transaction. Every query filters by accountId first.
import { DuplicateKeyError, mongoose, type Collection, type Store, type Transaction } from '@mailer/store';

const { Schema } = mongoose;

export interface SenderProfileDoc {
  _id: string;
  accountId: string;
  name: string;
  /** Canonical (trimmed, lower-case) address. */
  fromEmail: string;
  fromName: string;
  replyTo: string | null;
  isDefault: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export const senderProfileSchema = new Schema(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    name: { type: String, required: true },
    fromEmail: { type: String, required: true },
    fromName: { type: String, required: true },
    replyTo: { type: String, default: null },
    isDefault: { type: Boolean, required: true },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
// At most one default per account, whatever requests race.
senderProfileSchema.index({ accountId: 1 }, { unique: true, partialFilterExpression: { isDefault: true } });
senderProfileSchema.index({ accountId: 1, createdAt: 1 });

export const SENDER_PROFILES = 'sender_profiles';

export const senderProfileCollection = (store: Store): Collection<SenderProfileDoc> =>
  store.collection<SenderProfileDoc>(SENDER_PROFILES, senderProfileSchema);

/** What a PUT may change (isDefault is moved by makeDefault, never cleared directly). */
export type SenderProfileChanges = Pick<SenderProfileDoc, 'name' | 'fromEmail' | 'fromName' | 'replyTo' | 'updatedAt'>;

const oldestFirst = { sort: { createdAt: 1 as const, _id: 1 as const } };

/** One account's sender profiles. */
export function senderProfilesOf(store: Store, accountId: string) {
  const profiles = senderProfileCollection(store);

  /** Makes `id` the only default, in the given transaction. */
  async function moveDefault(id: string, tx: Transaction): Promise<void> {
    await profiles.updateMany({ accountId, isDefault: true, _id: { $ne: id } }, { $set: { isDefault: false } }, { tx });
    await profiles.updateOne({ _id: id, accountId }, { $set: { isDefault: true } }, { tx });
  }

  /**
   * Makes the oldest profile the default when the account has profiles but no default: a profile
   * inserted as non-default while the last default was being deleted would otherwise leave none.
   */
  async function healDefault(): Promise<void> {
    if (await profiles.findOne({ accountId, isDefault: true })) return;
    const [oldest] = await profiles.find({ accountId }, { ...oldestFirst, limit: 1 });
    if (!oldest) return;
    try {
      await profiles.updateOne({ _id: oldest._id, accountId }, { $set: { isDefault: true } });
    } catch (err) {
      if (!(err instanceof DuplicateKeyError)) throw err; // another request made one the default first
    }
  }

  return {
    accountId,
    /** Oldest first. */
    list: (): Promise<SenderProfileDoc[]> => profiles.find({ accountId }, oldestFirst),
    get: (id: string): Promise<SenderProfileDoc | null> => profiles.findOne({ _id: id, accountId }),
    getDefault: (): Promise<SenderProfileDoc | null> => profiles.findOne({ accountId, isDefault: true }),

    /**
     * Stores a new profile. `makeDefault` true moves the flag to it; otherwise it becomes the default
     * only when the account has none (its first profile). Answers the stored profile.
     */
    async insert(doc: Omit<SenderProfileDoc, 'accountId' | 'isDefault'>, makeDefault: boolean): Promise<SenderProfileDoc> {
      if (makeDefault) {
        await store.transaction(async (tx) => {
          await profiles.updateMany({ accountId, isDefault: true }, { $set: { isDefault: false } }, { tx });
          await profiles.insertOne({ ...doc, accountId, isDefault: true }, { tx });
        });
        return { ...doc, accountId, isDefault: true };
      }
      if (!(await profiles.findOne({ accountId, isDefault: true }))) {
        try {
          await profiles.insertOne({ ...doc, accountId, isDefault: true });
          return { ...doc, accountId, isDefault: true };
        } catch (err) {
          // Another request made its profile the default first: this one is an ordinary profile.
          if (!(err instanceof DuplicateKeyError)) throw err;
        }
      }
      await profiles.insertOne({ ...doc, accountId, isDefault: false });
      await healDefault();
      return (await profiles.findOne({ _id: doc._id, accountId })) ?? { ...doc, accountId, isDefault: false };
    },

    /** Changes a profile (and moves the default to it when asked); null when it does not exist. */
    async update(id: string, set: SenderProfileChanges, makeDefault: boolean): Promise<SenderProfileDoc | null> {
      if (makeDefault) {
        const found = await store.transaction(async (tx) => {
          const res = await profiles.updateOne({ _id: id, accountId }, { $set: set }, { tx });
          if (res.matchedCount === 0) return false;
          await moveDefault(id, tx);
          return true;
        });
        if (!found) return null;
      } else if ((await profiles.updateOne({ _id: id, accountId }, { $set: set })).matchedCount === 0) {
        return null;
      }
      return profiles.findOne({ _id: id, accountId });
    },

    /**
     * Deletes a profile; when it was the default, the oldest remaining profile becomes the default in
     * the same transaction. False when it did not exist.
     */
    async remove(id: string): Promise<boolean> {
      return store.transaction(async (tx) => {
        const doc = await profiles.findOne({ _id: id, accountId });
        if (!doc) return false;
        await profiles.deleteOne({ _id: id, accountId }, { tx });
        if (doc.isDefault) {
          const [successor] = await profiles.find({ accountId, _id: { $ne: id } }, { ...oldestFirst, limit: 1 });
          if (successor) await profiles.updateOne({ _id: successor._id, accountId }, { $set: { isDefault: true } }, { tx });
        }
        return true;
      });
    },
  };
}
export type SenderProfileRepository = ReturnType<typeof senderProfilesOf>;
