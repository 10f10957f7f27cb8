// Issues of the newsletters (collection 'rss_issues'). Every query is scoped to one account and
// newsletter except the auto-release poller's (`dueAutoReleases`): due PENDING_REVIEW issues of
// every account, claimed with a lease.
import { acrossAccounts, type Collection, mongoose, type Store, type Transaction } from '@mailer/store';
import type { Issue, IssueStatus } from '../domain/issues';

const { Schema } = mongoose;

export interface IssueDoc extends Omit<Issue, 'id'> {
  _id: string;
  leaseUntil: Date | null;
}

export const ISSUES = 'rss_issues';

const issueItemSchema = new Schema(
  {
    key: { type: String, required: true },
    guid: { type: String, default: '' },
    title: { type: String, default: '' },
    link: { type: String, default: '' },
    publishedAt: { type: Date, default: null },
    summary: { type: String, default: '' },
    content: { type: String, default: '' },
    author: { type: String, default: '' },
    imageUrl: { type: String, default: '' },
  },
  { _id: false },
);

export const issueSchema = new Schema(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    newsletterId: { type: String, required: true },
    status: { type: String, required: true, enum: ['PENDING_REVIEW', 'RELEASED', 'SENDING', 'SENT', 'DISCARDED', 'FAILED'] },
    items: { type: [issueItemSchema], default: [] },
    subject: { type: String, default: '' },
    createdAt: { type: Date, required: true },
    releasedAt: { type: Date, default: null },
    sentAt: { type: Date, default: null },
    recipientCount: { type: Number, default: 0 },
    deliveredCount: { type: Number, default: 0 },
    autoReleaseAt: { type: Date, default: null },
    sendDueAt: { type: Date, default: null },
    sendCursor: { type: String, default: '' },
    lastError: { type: String, default: null },
    sendFailures: { type: Number, default: 0 },
    leaseUntil: { type: Date, default: null },
  },
  { versionKey: false, minimize: false },
);
issueSchema.index({ accountId: 1, newsletterId: 1, createdAt: -1 });
// The auto-release poller: review issues by due time (others have none).
issueSchema.index({ autoReleaseAt: 1 });
// The send poller: released issues not yet handed to the sender, by due time.
issueSchema.index({ sendDueAt: 1 });

const toIssue = (doc: IssueDoc): Issue => {
  const { _id, leaseUntil: _leaseUntil, ...rest } = doc;
  return { id: _id, ...rest, sendCursor: rest.sendCursor ?? '', lastError: rest.lastError ?? null, sendFailures: rest.sendFailures ?? 0, items: rest.items.map((i) => ({ ...i, publishedAt: i.publishedAt ?? null })) };
};

export interface IssueRepository {
  create(issue: Issue, opts?: { tx?: Transaction }): Promise<Issue>;
  get(accountId: string, newsletterId: string, issueId: string): Promise<Issue | null>;
  /** Newest first. */
  page(accountId: string, newsletterId: string, pageNumber: number, pageSize: number): Promise<{ items: Issue[]; total: number }>;
  /** A status change guarded by the current status; null when the issue was not in `from`. */
  transition(accountId: string, newsletterId: string, issueId: string, from: IssueStatus, changes: Partial<Pick<Issue, 'status' | 'releasedAt' | 'sentAt' | 'sendDueAt' | 'lastError' | 'sendFailures'>>): Promise<Issue | null>;
  /**
   * The send stopped: due again at a later time (a failure, with why in `failure`) or never (null);
   * the send poller's lease is given back.
   */
  setSendDue(accountId: string, newsletterId: string, issueId: string, sendDueAt: Date | null, failure?: Pick<Issue, 'lastError' | 'sendFailures'>): Promise<void>;
  /**
   * A page of the issue's mail is queued: the cursor moves from `from` to `to`, the count grows and
   * the send poller's lease is renewed until `leaseUntil`. Null when the cursor was no longer `from`
   * (another replica's send moved it): this send stops.
   */
  recordSendProgress(accountId: string, newsletterId: string, issueId: string, from: string, to: { sendCursor: string; recipientCount: number; leaseUntil: Date }): Promise<Issue | null>;
  /** SENDING -> SENT at the cursor `from`, in the caller's transaction; false when it was not so. */
  completeSend(accountId: string, newsletterId: string, issueId: string, from: string, done: { sentAt: Date; recipientCount: number }, tx: Transaction): Promise<boolean>;
  deleteAll(accountId: string, newsletterId: string): Promise<void>;
}

export const issueCollection = (store: Store): Collection<IssueDoc> => store.collection<IssueDoc>(ISSUES, issueSchema);

export function issueRepository(store: Store): IssueRepository {
  const issues = issueCollection(store);
  return {
    async create(issue, opts) {
      const { id, ...rest } = issue;
      await issues.insertOne({ _id: id, ...rest, leaseUntil: null }, opts);
      return issue;
    },
    async get(accountId, newsletterId, issueId) {
      const doc = await issues.findOne({ _id: issueId, accountId, newsletterId });
      return doc && toIssue(doc);
    },
    async page(accountId, newsletterId, pageNumber, pageSize) {
      const filter = { accountId, newsletterId };
      const [total, docs] = await Promise.all([issues.countDocuments(filter), issues.find(filter, { sort: { createdAt: -1, _id: -1 }, skip: (pageNumber - 1) * pageSize, limit: pageSize })]);
      return { total, items: docs.map(toIssue) };
    },
    async transition(accountId, newsletterId, issueId, from, changes) {
      // Entering SENDING is the send poller's own step, under its lease. Every other change ends the
      // auto-release wait (leaving PENDING_REVIEW) and gives the lease back, so the poller the issue
      // goes to (a release: the send poller) claims it at once.
      const set = changes.status === 'SENDING' ? changes : { ...changes, autoReleaseAt: null, leaseUntil: null };
      const doc = await issues.findOneAndUpdate({ _id: issueId, accountId, newsletterId, status: from }, { $set: set }, { returnDocument: 'after' });
      return doc && toIssue(doc);
    },
    async setSendDue(accountId, newsletterId, issueId, sendDueAt, failure) {
      await issues.updateOne({ _id: issueId, accountId, newsletterId }, { $set: { sendDueAt, leaseUntil: null, ...failure } });
    },
    async recordSendProgress(accountId, newsletterId, issueId, from, to) {
      // A queued page: whatever failed before has passed.
      const set = { ...to, lastError: null, sendFailures: 0 };
      const doc = await issues.findOneAndUpdate({ _id: issueId, accountId, newsletterId, status: 'SENDING', sendCursor: from }, { $set: set }, { returnDocument: 'after' });
      return doc && toIssue(doc);
    },
    async completeSend(accountId, newsletterId, issueId, from, done, tx) {
      const changes = { status: 'SENT' as const, ...done, sendDueAt: null, leaseUntil: null, lastError: null, sendFailures: 0 };
      return (await issues.updateOne({ _id: issueId, accountId, newsletterId, status: 'SENDING', sendCursor: from }, { $set: changes }, { tx })).matchedCount > 0;
    },
    async deleteAll(accountId, newsletterId) {
      await issues.deleteMany({ accountId, newsletterId });
    },
  };
}

/** The send poller's view: RELEASED and SENDING issues due to (re)start their mail, of every account. */
export function dueSends(issues: Collection<IssueDoc>) {
  return claimsOn(issues, ['RELEASED', 'SENDING'], 'sendDueAt');
}

/** The auto-release poller's view: PENDING_REVIEW issues whose review time is over, of every account. */
export function dueAutoReleases(issues: Collection<IssueDoc>) {
  return claimsOn(issues, ['PENDING_REVIEW'], 'autoReleaseAt');
}

function claimsOn(collection: Collection<IssueDoc>, statuses: IssueStatus[], dueField: 'autoReleaseAt' | 'sendDueAt') {
  const issues = acrossAccounts(collection);
  const status = statuses.length === 1 ? statuses[0] : { $in: statuses };
  return {
    async claim(now: Date, leaseMs: number, limit: number): Promise<Array<Pick<IssueDoc, '_id' | 'accountId' | 'newsletterId'>>> {
      const candidates = await issues.find({ status, [dueField]: { $lte: now } }, { sort: { [dueField]: 1 }, limit, projection: { _id: 1, leaseUntil: 1 } });
      const claimed: Array<Pick<IssueDoc, '_id' | 'accountId' | 'newsletterId'>> = [];
      for (const c of candidates) {
        if (c.leaseUntil && c.leaseUntil > now) continue;
        const got = await issues.findOneAndUpdate(
          { _id: c._id, status, [dueField]: { $lte: now }, $or: [{ leaseUntil: null }, { leaseUntil: { $lte: now } }] },
          { $set: { leaseUntil: new Date(now.getTime() + leaseMs) } },
          { returnDocument: 'after' },
        );
        if (got) claimed.push({ _id: got._id, accountId: got.accountId, newsletterId: got.newsletterId });
      }
      return claimed;
    },
    async nextDueAt(): Promise<Date | null> {
      const [next] = await issues.find({ status, [dueField]: { $ne: null } }, { sort: { [dueField]: 1 }, limit: 1, projection: { [dueField]: 1 } });
      return next?.[dueField] ?? null;
    },
  };
}
