// The rss service's newsletters (collection 'newsletters'): the record of domain/newsletter.ts plus
// the poller's lease. Every query is scoped to one account except the poller's (`dueNewsletters`),
// the one cross-account read: due rows of every account.
import { acrossAccounts, type Collection, mongoose, type Store, type Transaction } from '@mailer/store';
import type { NewsletterTemplates } from '../domain/merge-tags';
import type { Newsletter, NewsletterSettings, NewsletterStatus } from '../domain/newsletter';

export interface NewsletterDoc extends Omit<Newsletter, 'id'> {
  _id: string;
  /** min(nextPollAt, nextTickAt) while ACTIVE, null while PAUSED: the poller's one indexed due time. */
  dueAt: Date | null;
  /** The poller's claim (another replica leaves the row alone until then). */
  leaseUntil: Date | null;
}

export const NEWSLETTERS = 'newsletters';

const { Schema } = mongoose;

export const newsletterSchema = new Schema(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    name: { type: String, required: true },
    sourceUrl: { type: String, required: true },
    siteUrl: { type: String, default: null },
    feedUrl: { type: String, default: null },
    feedTitle: { type: String, default: null },
    triggerMode: { type: String, required: true, enum: ['INSTANT', 'SCHEDULE', 'THRESHOLD'] },
    schedule: { type: String, default: null },
    minItems: { type: Number, default: null },
    thresholdMaxAgeDays: { type: Number, default: null },
    releasePolicy: { type: String, required: true, enum: ['AUTO', 'REVIEW'] },
    reviewAutoReleaseMinutes: { type: Number, default: null },
    segmentId: { type: String, default: null },
    senderProfileId: { type: String, required: true },
    topicId: { type: String, default: null },
    subjectPattern: { type: String, default: '' },
    htmlContent: { type: String, default: '' },
    cssContent: { type: String, default: '' },
    maxItemsPerIssue: { type: Number, required: true },
    status: { type: String, required: true, enum: ['ACTIVE', 'PAUSED'] },
    lastCheckedAt: { type: Date, default: null },
    lastItemPublishedAt: { type: Date, default: null },
    lastError: { type: String, default: null },
    etag: { type: String, default: null },
    lastModified: { type: String, default: null },
    nextPollAt: { type: Date, default: null },
    nextTickAt: { type: Date, default: null },
    dueAt: { type: Date, default: null },
    leaseUntil: { type: Date, default: null },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
newsletterSchema.index({ accountId: 1, name: 1 });
newsletterSchema.index({ accountId: 1, senderProfileId: 1 });
// Who uses a segment or topic (asked before one is deleted).
newsletterSchema.index({ accountId: 1, segmentId: 1 });
newsletterSchema.index({ accountId: 1, topicId: 1 });
// The poller: due newsletters by due time (PAUSED ones have none).
newsletterSchema.index({ dueAt: 1 });

/** What the poller records after a read: the outcome and when to look again. */
export type PollChanges = Partial<Pick<Newsletter, 'lastCheckedAt' | 'lastItemPublishedAt' | 'lastError' | 'etag' | 'lastModified' | 'feedTitle' | 'siteUrl' | 'feedUrl' | 'nextPollAt' | 'nextTickAt'>>;

export interface NewsletterRepository {
  get(accountId: string, newsletterId: string): Promise<Newsletter | null>;
  /** The account's newsletters, oldest first. */
  list(accountId: string): Promise<Newsletter[]>;
  create(newsletter: Newsletter, opts?: { tx?: Transaction }): Promise<Newsletter>;
  /** Replaces the settings (and the due times they imply). Null when it does not exist. */
  update(accountId: string, newsletterId: string, settings: NewsletterSettings & Pick<Newsletter, 'updatedAt' | 'nextTickAt'>): Promise<Newsletter | null>;
  /** Status change guarded by the current status; null when no newsletter in that status matched. */
  setStatus(accountId: string, newsletterId: string, from: NewsletterStatus, changes: Pick<Newsletter, 'status' | 'updatedAt' | 'nextPollAt' | 'nextTickAt'>): Promise<Newsletter | null>;
  /** Records a poll's outcome and releases the poller's lease. */
  recordPoll(accountId: string, newsletterId: string, changes: PollChanges, opts?: { tx?: Transaction }): Promise<void>;
  /**
   * Takes the poller's lease on one newsletter (a manual check polls as the poller does, never beside
   * it); false while another poll holds it.
   */
  lease(accountId: string, newsletterId: string, now: Date, leaseMs: number): Promise<boolean>;
  delete(accountId: string, newsletterId: string): Promise<boolean>;
  /** The account's newsletters with their templates, by name (field usage report). */
  templatesOf(accountId: string): Promise<NewsletterTemplates[]>;
  /** How many of the account's newsletters name the sender profile, segment or topic, and up to `limit` of them by name. */
  naming(accountId: string, member: 'senderProfileId' | 'segmentId' | 'topicId', id: string, limit?: number): Promise<{ count: number; newsletters: Array<{ id: string; name: string }> }>;
}

const toNewsletter = (doc: NewsletterDoc): Newsletter => {
  const { _id, dueAt: _dueAt, leaseUntil: _leaseUntil, ...rest } = doc;
  return { id: _id, ...rest };
};

/** The poller's due time of an ACTIVE newsletter. */
export function dueAtOf(n: Pick<Newsletter, 'status' | 'nextPollAt' | 'nextTickAt'>): Date | null {
  if (n.status !== 'ACTIVE') return null;
  const times = [n.nextPollAt, n.nextTickAt].filter((t): t is Date => t !== null).map((t) => t.getTime());
  return times.length ? new Date(Math.min(...times)) : null;
}

export function newsletterRepository(store: Store): NewsletterRepository {
  const newsletters = newsletterCollection(store);
  return {
    async get(accountId, newsletterId) {
      const doc = await newsletters.findOne({ _id: newsletterId, accountId });
      return doc && toNewsletter(doc);
    },
    async list(accountId) {
      return (await newsletters.find({ accountId }, { sort: { createdAt: 1, _id: 1 } })).map(toNewsletter);
    },
    async create(newsletter, opts) {
      const { id, ...rest } = newsletter;
      await newsletters.insertOne({ _id: id, ...rest, dueAt: dueAtOf(newsletter), leaseUntil: null }, opts);
      return newsletter;
    },
    async update(accountId, newsletterId, settings) {
      const current = await newsletters.findOne({ _id: newsletterId, accountId }, { projection: { status: 1, nextPollAt: 1 } });
      if (!current) return null;
      const dueAt = dueAtOf({ status: current.status, nextPollAt: current.nextPollAt, nextTickAt: settings.nextTickAt });
      const doc = await newsletters.findOneAndUpdate({ _id: newsletterId, accountId }, { $set: { ...settings, dueAt } }, { returnDocument: 'after' });
      return doc && toNewsletter(doc);
    },
    async setStatus(accountId, newsletterId, from, changes) {
      const doc = await newsletters.findOneAndUpdate(
        { _id: newsletterId, accountId, status: from },
        { $set: { ...changes, dueAt: dueAtOf(changes), leaseUntil: null } },
        { returnDocument: 'after' },
      );
      return doc && toNewsletter(doc);
    },
    async recordPoll(accountId, newsletterId, changes, opts) {
      const current = await newsletters.findOne({ _id: newsletterId, accountId }, { projection: { status: 1, nextPollAt: 1, nextTickAt: 1 } });
      if (!current) return;
      const next = { status: current.status, nextPollAt: changes.nextPollAt ?? current.nextPollAt, nextTickAt: changes.nextTickAt === undefined ? current.nextTickAt : changes.nextTickAt };
      await newsletters.updateOne({ _id: newsletterId, accountId }, { $set: { ...changes, dueAt: dueAtOf(next), leaseUntil: null } }, opts);
    },
    async lease(accountId, newsletterId, now, leaseMs) {
      const got = await newsletters.findOneAndUpdate(
        { _id: newsletterId, accountId, $or: [{ leaseUntil: null }, { leaseUntil: { $lte: now } }] },
        { $set: { leaseUntil: new Date(now.getTime() + leaseMs) } },
        { returnDocument: 'after' },
      );
      return got !== null;
    },
    async delete(accountId, newsletterId) {
      return (await newsletters.deleteOne({ _id: newsletterId, accountId })) > 0;
    },
    async templatesOf(accountId) {
      const docs = await newsletters.find({ accountId }, { sort: { name: 1, _id: 1 }, projection: { name: 1, status: 1, subjectPattern: 1, htmlContent: 1 } });
      return docs.map((d) => ({ id: d._id, name: d.name, status: d.status, subjectPattern: d.subjectPattern, htmlContent: d.htmlContent }));
    },
    async naming(accountId, member, id, limit = 50) {
      const filter = { accountId, [member]: id };
      const [count, some] = await Promise.all([newsletters.countDocuments(filter), newsletters.find(filter, { sort: { name: 1, _id: 1 }, limit, projection: { name: 1 } })]);
      return { count, newsletters: some.map((d) => ({ id: d._id, name: d.name })) };
    },
  };
}

export const newsletterCollection = (store: Store): Collection<NewsletterDoc> => store.collection<NewsletterDoc>(NEWSLETTERS, newsletterSchema);

/** The poller's view: due ACTIVE newsletters of every account, claimed with a lease. */
export function dueNewsletters(collection: Collection<NewsletterDoc>) {
  const newsletters = acrossAccounts(collection);
  return {
    /** Claims up to `limit` newsletters due by `now` whose lease is free. */
    async claim(now: Date, leaseMs: number, limit: number): Promise<Array<Pick<NewsletterDoc, '_id' | 'accountId'>>> {
      const candidates = await newsletters.find({ dueAt: { $lte: now } }, { sort: { dueAt: 1 }, limit, projection: { _id: 1, accountId: 1, leaseUntil: 1 } });
      const claimed: Array<Pick<NewsletterDoc, '_id' | 'accountId'>> = [];
      for (const c of candidates) {
        if (c.leaseUntil && c.leaseUntil > now) continue;
        const got = await newsletters.findOneAndUpdate(
          { _id: c._id, dueAt: { $lte: now }, $or: [{ leaseUntil: null }, { leaseUntil: { $lte: now } }] },
          { $set: { leaseUntil: new Date(now.getTime() + leaseMs) } },
          { returnDocument: 'after' },
        );
        if (got) claimed.push({ _id: got._id, accountId: got.accountId });
      }
      return claimed;
    },
    /** When the next newsletter is due (leased ones included: a lease may lapse), or null. */
    async nextDueAt(): Promise<Date | null> {
      const [next] = await newsletters.find({ dueAt: { $ne: null } }, { sort: { dueAt: 1 }, limit: 1, projection: { dueAt: 1 } });
      return next?.dueAt ?? null;
    },
  };
}
