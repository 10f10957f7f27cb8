// The suppression list (collection 'suppressions'): addresses no mail of the account goes to
// (the API contract "Delivery facts ... suppressions"). One record per (account, address); deleting it lets
// the address receive mail again. Every query filters by accountId first.
import { DuplicateKeyError, mongoose, type AccountFilter, type Collection, type Store, type Transaction } from '@mailer/store';

const { Schema } = mongoose;

export const SUPPRESSION_REASONS = ['HARD_BOUNCE', 'COMPLAINT', 'MANUAL', 'SOFT_BOUNCES'] as const;
export type SuppressionListReason = (typeof SUPPRESSION_REASONS)[number];

export interface SuppressionDoc {
  _id: string;
  accountId: string;
  /** Canonical (trimmed, lower-case) address. */
  email: string;
  reason: SuppressionListReason;
  createdAt: Date;
  /** The message whose bounce or complaint caused it (null for MANUAL). */
  messageId: string | null;
}

const suppressionSchema = new Schema(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    email: { type: String, required: true },
    reason: { type: String, required: true, enum: SUPPRESSION_REASONS },
    createdAt: { type: Date, required: true },
    messageId: { type: String, default: null },
  },
  { versionKey: false, minimize: false },
);
suppressionSchema.index({ accountId: 1, email: 1 }, { unique: true });
suppressionSchema.index({ accountId: 1, createdAt: -1 });

export const suppressionCollection = (store: Store): Collection<SuppressionDoc> => store.collection<SuppressionDoc>('suppressions', suppressionSchema);

export interface SuppressionQuery {
  email?: string;
  reason?: SuppressionListReason;
  pageNumber: number;
  pageSize: number;
}

export function suppressionsOf(suppressions: Collection<SuppressionDoc>, accountId: string) {
  return {
    accountId,
    find: (email: string): Promise<SuppressionDoc | null> => suppressions.findOne({ accountId, email }),
    /** The suppressed addresses among these (canonical) ones, with their reasons. */
    findMany: async (emails: string[]): Promise<Map<string, SuppressionListReason>> =>
      new Map(emails.length ? (await suppressions.find({ accountId, email: { $in: emails } }, { projection: { email: 1, reason: 1 } })).map((s) => [s.email, s.reason] as const) : []),
    /** Adds the address; false when it was already suppressed (the first reason stays). */
    async add(doc: Omit<SuppressionDoc, 'accountId'>, tx?: Transaction): Promise<boolean> {
      try {
        await suppressions.insertOne({ ...doc, accountId }, { tx });
        return true;
      } catch (err) {
        if (err instanceof DuplicateKeyError) return false;
        throw err;
      }
    },
    /** Removes the address; false when it was not suppressed. */
    remove: async (email: string): Promise<boolean> => (await suppressions.deleteOne({ accountId, email })) > 0,
    async list(q: SuppressionQuery): Promise<{ items: SuppressionDoc[]; totalItems: number }> {
      const filter: AccountFilter = { accountId };
      if (q.email !== undefined) filter.email = q.email;
      if (q.reason !== undefined) filter.reason = q.reason;
      const [items, totalItems] = await Promise.all([
        suppressions.find(filter, { sort: { createdAt: -1, _id: -1 }, skip: (q.pageNumber - 1) * q.pageSize, limit: q.pageSize }),
        suppressions.countDocuments(filter),
      ]);
      return { items, totalItems };
    },
  };
}
export type SuppressionRepository = ReturnType<typeof suppressionsOf>;
