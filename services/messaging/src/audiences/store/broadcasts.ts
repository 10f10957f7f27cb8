// Broadcasts (collection 'broadcasts'): what the customer set, the status, and the send's state (the
// audience cursor, the A/B winner, the due time and lease of the send poller). Every query is scoped
// to one account except the send poller's (`dueBroadcasts`): due broadcasts of every account,
// claimed with a lease. Every status change is a compare-and-set on the status it leaves.
import { acrossAccounts, type Collection, mongoose, type Store, type Transaction } from '@mailer/store';
import type { BroadcastInput, BroadcastStatus } from '../domain/broadcast';
import { BROADCAST_STATUSES } from '../domain/broadcast';

const { Schema } = mongoose;

export interface BroadcastDoc extends BroadcastInput {
  _id: string;
  accountId: string;
  status: BroadcastStatus;
  /** A resend to the non-openers of that broadcast; null otherwise. */
  resendOf: string | null;
  sendAt: Date | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** The send poller looks at the broadcast at this time (null: nothing due). */
  sendDueAt: Date | null;
  leaseUntil: Date | null;
  /** The audience cursor (the last reader decided); '' before the first page. */
  cursor: string;
  /** Every reader of the audience is recorded, as a recipient or excluded. */
  audienceDone: boolean;
  /** A/B: when the winner is decided, and the winner (subject index) once it is. */
  decideAt: Date | null;
  winner: number | null;
  /** Failed tries in a row (a peer's outage not counted); FAILED at BROADCAST_SEND_MAX_ATTEMPTS. */
  sendFailures: number;
}

export const BROADCASTS = 'broadcasts';
const nullableDate = { type: Date, default: null };
const nullableString = { type: String, default: null };

const broadcastSchema = new Schema(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    name: { type: String, required: true },
    templateName: { type: String, required: true },
    senderProfileId: nullableString,
    segmentId: nullableString,
    topicId: nullableString,
    subject: nullableString,
    abTest: { type: Schema.Types.Mixed, default: null },
    sendWindow: { type: Schema.Types.Mixed, default: null },
    resendOf: nullableString,
    status: { type: String, required: true, enum: BROADCAST_STATUSES },
    sendAt: nullableDate,
    startedAt: nullableDate,
    finishedAt: nullableDate,
    lastError: nullableString,
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
    sendDueAt: nullableDate,
    leaseUntil: nullableDate,
    cursor: { type: String, default: '' },
    audienceDone: { type: Boolean, default: false },
    decideAt: nullableDate,
    winner: { type: Number, default: null },
    sendFailures: { type: Number, default: 0 },
  },
  { versionKey: false, minimize: false },
);
// GET /broadcasts (newest first, optionally by status) and the in-use checks (SCHEDULED, SENDING).
broadcastSchema.index({ accountId: 1, createdAt: -1 });
broadcastSchema.index({ accountId: 1, status: 1, createdAt: -1 });
// The send poller: broadcasts with something due, by due time.
broadcastSchema.index({ sendDueAt: 1 });

export const broadcastCollection = (store: Store): Collection<BroadcastDoc> => store.collection<BroadcastDoc>(BROADCASTS, broadcastSchema);

/** The statuses a broadcast can still be changed or deleted in, and those that use what it names. */
export const EDITABLE: BroadcastStatus[] = ['DRAFT', 'SCHEDULED'];
export const ACTIVE: BroadcastStatus[] = ['SCHEDULED', 'SENDING'];

type Changes = Partial<Omit<BroadcastDoc, '_id' | 'accountId'>>;

export function broadcastRepository(store: Store) {
  const broadcasts = broadcastCollection(store);
  return {
    collection: broadcasts,
    insert: async (doc: BroadcastDoc): Promise<BroadcastDoc> => {
      await broadcasts.insertOne(doc);
      return doc;
    },
    get: (accountId: string, id: string): Promise<BroadcastDoc | null> => broadcasts.findOne({ _id: id, accountId }),
    async page(accountId: string, status: BroadcastStatus | undefined, pageNumber: number, pageSize: number): Promise<{ items: BroadcastDoc[]; total: number }> {
      const filter = status ? { accountId, status } : { accountId };
      const [items, total] = await Promise.all([
        broadcasts.find(filter, { sort: { createdAt: -1, _id: -1 }, skip: (pageNumber - 1) * pageSize, limit: pageSize }),
        broadcasts.countDocuments(filter),
      ]);
      return { items, total };
    },
    /** A change guarded by the current status (one of `from`); null when the broadcast was in none of them. */
    transition: (accountId: string, id: string, from: BroadcastStatus | BroadcastStatus[], changes: Changes, tx?: Transaction): Promise<BroadcastDoc | null> =>
      broadcasts.findOneAndUpdate({ _id: id, accountId, status: Array.isArray(from) ? { $in: from } : from }, { $set: changes }, { returnDocument: 'after', tx }),
    /** A send step guarded by the status and the audience cursor it started from (another replica's step, or a cancel, wins). */
    step: async (b: Pick<BroadcastDoc, '_id' | 'accountId' | 'cursor'>, changes: Changes, tx: Transaction): Promise<boolean> =>
      (await broadcasts.updateOne({ _id: b._id, accountId: b.accountId, status: 'SENDING', cursor: b.cursor }, { $set: changes }, { tx })).matchedCount === 1,
    remove: async (accountId: string, id: string): Promise<boolean> => (await broadcasts.deleteOne({ _id: id, accountId, status: { $in: EDITABLE } })) > 0,
    /** The send stopped for now: due again at `sendDueAt` (null: never), the lease given back. */
    setSendDue: async (accountId: string, id: string, sendDueAt: Date | null, changes: Changes = {}): Promise<void> => {
      await broadcasts.updateOne({ _id: id, accountId }, { $set: { ...changes, sendDueAt, leaseUntil: null } });
    },
    /** The send poller's lease given back, the due time kept. */
    releaseLease: async (accountId: string, id: string): Promise<void> => {
      await broadcasts.updateOne({ _id: id, accountId }, { $set: { leaseUntil: null } });
    },
    /** SCHEDULED or SENDING broadcasts naming `value` in `member` (the in-use checks): up to `limit` of them and their number. */
    async naming(accountId: string, member: 'templateName' | 'senderProfileId' | 'segmentId' | 'topicId', value: string, limit: number): Promise<{ count: number; broadcasts: BroadcastDoc[] }> {
      const filter = { accountId, status: { $in: ACTIVE }, [member]: value };
      const [count, found] = await Promise.all([broadcasts.countDocuments(filter), broadcasts.find(filter, { sort: { createdAt: 1 }, limit })]);
      return { count, broadcasts: found };
    },
  };
}
export type BroadcastRepository = ReturnType<typeof broadcastRepository>;

/** The send poller's view: broadcasts of every account with something due (a start, a page, a window, a decision, a cancel's clean-up). */
export function dueBroadcasts(collection: Collection<BroadcastDoc>) {
  const broadcasts = acrossAccounts(collection);
  return {
    async claim(now: Date, leaseMs: number, limit: number): Promise<Array<Pick<BroadcastDoc, '_id' | 'accountId'>>> {
      const candidates = await broadcasts.find({ sendDueAt: { $lte: now } }, { sort: { sendDueAt: 1 }, limit, projection: { _id: 1, leaseUntil: 1 } });
      const claimed: Array<Pick<BroadcastDoc, '_id' | 'accountId'>> = [];
      for (const c of candidates) {
        if (c.leaseUntil && c.leaseUntil > now) continue;
        const got = await broadcasts.findOneAndUpdate(
          { _id: c._id, sendDueAt: { $lte: now }, $or: [{ leaseUntil: null }, { leaseUntil: { $lte: now } }] },
          { $set: { leaseUntil: new Date(now.getTime() + leaseMs) } },
          { returnDocument: 'after' },
        );
        if (got) claimed.push({ _id: got._id, accountId: got.accountId });
      }
      return claimed;
    },
    async nextDueAt(): Promise<Date | null> {
      const [next] = await broadcasts.find({ sendDueAt: { $ne: null } }, { sort: { sendDueAt: 1 }, limit: 1, projection: { sendDueAt: 1 } });
      return next?.sendDueAt ?? null;
    },
  };
}
