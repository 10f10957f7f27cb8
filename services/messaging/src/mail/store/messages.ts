// Email messages (collection 'email_messages') and their rendered bodies ('email_bodies').
//
// The message record is the truth of a mail's life (the API contract "Transactional email", EmailMessage): the
// delivery worker reads it before sending and records the attempt before and the outcome after, so a
// redelivered job never sends twice. The rendered body lives apart and is deleted once the message can
// no longer be sent (SENT, BOUNCED, FAILED): a million message records stay a few hundred bytes each.
// Every query filters by accountId first; the cross-account ones are named so.
import { type AccountFilter, acrossAccounts, type Collection, mongoose, type Store, type Transaction } from '@mailer/store';
import type { EMAIL_KINDS } from '@mailer/nats/facts';
import type { SendingClaim } from '../domain/delivery';
import { bucketCountPipeline, countsPerBucket } from '@mailer/reports';
import { countPerBucketWithDays, reportDayCollections, type ReportDays, type RolledLog } from './report-days';
import { broadcastProgress, recipientCollections, type BroadcastMail, type BroadcastProgress } from '../../audiences/store/broadcast-recipients';

export type EmailKind = (typeof EMAIL_KINDS)[number];

const { Schema } = mongoose;

export const MESSAGE_STATUSES = ['QUEUED', 'DEFERRED', 'SENT', 'DELIVERED', 'BOUNCED', 'FAILED', 'SUPPRESSED'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];
export type SuppressionReason = 'HARD_BOUNCE' | 'COMPLAINT' | 'MANUAL' | 'SOFT_BOUNCES' | 'BLOCKED';

/** One delivery attempt: `outcome` SENT (250), DEFERRED (4xx, connection error), BOUNCED (5xx), FAILED (retries ran out). */
export interface DeliveryAttempt {
  at: Date;
  outcome: 'STARTED' | 'SENT' | 'DEFERRED' | 'BOUNCED' | 'FAILED';
  smtpCode: number | null;
  response: string | null;
}

export interface EmailMessageDoc {
  _id: string; // messageId
  accountId: string;
  kind: EmailKind;
  templateName: string | null;
  /** Canonical recipient address. */
  email: string;
  subscriberId: string | null;
  /** The topic of a marketing mail (opt-outs, List-Unsubscribe), null for transactional mail. */
  topicId: string | null;
  senderProfileId: string;
  fromEmail: string;
  fromName: string;
  replyTo: string | null;
  subject: string;
  /** Original URLs of the rewritten links, in order: a click token names an index into this list. */
  links: string[];
  tracking: { opens: boolean; clicks: boolean };
  status: MessageStatus;
  suppressionReason: SuppressionReason | null;
  /** Every status the message took, oldest first. */
  history: Array<{ status: MessageStatus; at: Date }>;
  attempts: DeliveryAttempt[];
  /** When the delivery worker may try again (DEFERRED), for the job's redelivery delay. */
  nextAttemptAt: Date | null;
  /** The delivery worker's claim while it sends (set before the send, cleared with the outcome); absent or null otherwise. */
  sending?: SendingClaim | null;
  createdAt: Date;
  sentAt: Date | null;
  deliveredAt: Date | null;
  bouncedAt: Date | null;
  complainedAt: Date | null;
  bounce: { type: 'HARD' | 'SOFT'; diagnosticCode: string | null } | null;
  openCount: number;
  firstOpenedAt: Date | null;
  machineOpenCount: number;
  clickCount: number;
  firstClickedAt: Date | null;
  machineClickCount: number;
  eventProperties: Record<string, unknown> | null;
  /** The sender's dedupe key (SendEmailMessageRequest.dedupe_key): unique in the account when set. */
  dedupeKey?: string | null;
  /** The audience send (QueueAudiencePage send_key) the message belongs to; absent for single mails. */
  audienceKey?: string | null;
  /** The broadcast of a BROADCAST mail (its audience's mail, and its test sends, which have no audienceKey). */
  broadcastId?: string | null;
  /** The A/B variant (subject index) of a broadcast mail. */
  variant?: number | null;
  /** A batch message with an idempotency key: a hash of what was asked, so a reused key with another body is told apart. */
  requestHash?: string | null;
}

/** A new message's bounce and engagement members: nothing has happened to it yet. */
export const noEngagementYet = (): Pick<
  EmailMessageDoc,
  'bounce' | 'openCount' | 'firstOpenedAt' | 'machineOpenCount' | 'clickCount' | 'firstClickedAt' | 'machineClickCount'
> => ({ bounce: null, openCount: 0, firstOpenedAt: null, machineOpenCount: 0, clickCount: 0, firstClickedAt: null, machineClickCount: 0 });

/** The rendered mail, kept only while it may still be sent. */
export interface EmailBodyDoc {
  _id: string; // messageId
  accountId: string;
  html: string;
  text: string;
  /** Extra headers (List-Unsubscribe, List-Unsubscribe-Post for marketing mail). */
  headers: Record<string, string>;
}

const nullableDate = { type: Date, default: null };
/** A rendered subject, html or text: may be empty (a template of only missing variables), which mongoose's `required` refuses for strings. */
const renderedPart = { type: String, default: '' };

/** The time fields reports count by (each indexed with accountId). */
export const REPORT_TIME_FIELDS = ['sentAt', 'deliveredAt', 'firstOpenedAt', 'firstClickedAt', 'bouncedAt', 'complainedAt'] as const;
export type ReportTimeField = (typeof REPORT_TIME_FIELDS)[number];

const messageSchema = new Schema(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    kind: { type: String, required: true, enum: ['TRANSACTIONAL', 'AUTOMATION', 'RSS', 'BROADCAST'] },
    templateName: { type: String, default: null },
    email: { type: String, required: true },
    subscriberId: { type: String, default: null },
    topicId: { type: String, default: null },
    senderProfileId: { type: String, required: true },
    fromEmail: { type: String, required: true },
    fromName: { type: String, required: true },
    replyTo: { type: String, default: null },
    subject: renderedPart,
    links: { type: [String], default: [] },
    tracking: { opens: { type: Boolean, required: true }, clicks: { type: Boolean, required: true } },
    status: { type: String, required: true, enum: MESSAGE_STATUSES },
    suppressionReason: { type: String, default: null },
    history: { type: [Schema.Types.Mixed], default: [] },
    attempts: { type: [Schema.Types.Mixed], default: [] },
    nextAttemptAt: nullableDate,
    sending: { type: Schema.Types.Mixed, default: null },
    createdAt: { type: Date, required: true },
    sentAt: nullableDate,
    deliveredAt: nullableDate,
    bouncedAt: nullableDate,
    complainedAt: nullableDate,
    bounce: { type: Schema.Types.Mixed, default: null },
    openCount: { type: Number, default: 0 },
    firstOpenedAt: nullableDate,
    machineOpenCount: { type: Number, default: 0 },
    clickCount: { type: Number, default: 0 },
    firstClickedAt: nullableDate,
    machineClickCount: { type: Number, default: 0 },
    eventProperties: { type: Schema.Types.Mixed, default: null },
    dedupeKey: { type: String, default: null },
    audienceKey: { type: String },
    broadcastId: { type: String },
    variant: { type: Number },
    requestHash: { type: String },
  },
  { versionKey: false, minimize: false },
);
/** The unique index that decides which of two concurrent sends with one dedupe key creates the message. */
export const DEDUPE_INDEX = 'accountId_dedupeKey';
messageSchema.index({ accountId: 1, dedupeKey: 1 }, { unique: true, partialFilterExpression: { dedupeKey: { $gt: '' } }, name: DEDUPE_INDEX });
// CountAudienceSends: an audience send's messages, delivered ones apart.
messageSchema.index({ accountId: 1, audienceKey: 1, status: 1 }, { partialFilterExpression: { audienceKey: { $gt: '' } } });
// GET /email-messages: newest first, optionally by address, template or status. A page walks an
// index in the list's order: the account's, or the address's (few messages); a template or status
// page walks the account's and tests each record until its page is full (an index per filter would
// cost every status change of every message two more index writes). The tie-break on _id is part of
// the keys: messages accepted together share createdAt (a batch, a broadcast page), and an index
// without it leaves every group of ties to be sorted, page after page. The totals are kept counts.
export const LIST_ORDER = { createdAt: -1, _id: -1 } as const;
messageSchema.index({ accountId: 1, ...LIST_ORDER });
messageSchema.index({ accountId: 1, email: 1, ...LIST_ORDER });
const LIST_COUNTS = ['accountId', ['accountId', 'templateName'], ['accountId', 'status']] as const;
// The soft-bounce threshold: an address's soft bounces in the last 7 days (softBouncesSince).
messageSchema.index({ accountId: 1, email: 1, bouncedAt: -1 });
// POST /reports/emails: one range scan per metric over its fact time (REPORT_TIME_FIELDS).
for (const field of REPORT_TIME_FIELDS) messageSchema.index({ accountId: 1, [field]: 1 });

const bodySchema = new Schema(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    html: renderedPart,
    text: renderedPart,
    headers: { type: Schema.Types.Mixed, default: {} },
  },
  { versionKey: false, minimize: false },
);

export interface MessageCollections {
  messages: Collection<EmailMessageDoc>;
  bodies: Collection<EmailBodyDoc>;
  /** The daily aggregates the email report reads once the messages are pruned. */
  days: ReportDays;
  /** A broadcast's recipients and tally follow its messages' changes (store/broadcast-recipients.ts). */
  broadcasts: BroadcastProgress;
}

export const EMAIL_MESSAGES = 'email_messages';

/** How long message records and the email report's daily aggregates are kept (MESSAGE_RETENTION_DAYS, REPORT_RETENTION_DAYS). */
export interface MessageRetention {
  messageDays: number;
  reportDays: number;
}
export const DEFAULT_MESSAGE_RETENTION: MessageRetention = { messageDays: 30, reportDays: 730 };

export function messageCollections(store: Store, retention: MessageRetention = DEFAULT_MESSAGE_RETENTION): MessageCollections {
  return {
    // a record goes `messageDays` after it was created (its body went once it was final); the
    // account's total of a list page, unfiltered or by template or status, is a kept count, not a
    // count of a million index entries (an address has few messages: its index range is counted)
    messages: store.collection<EmailMessageDoc>(EMAIL_MESSAGES, messageSchema, { expireAfter: { path: 'createdAt', days: retention.messageDays }, countBy: LIST_COUNTS }),
    bodies: store.collection<EmailBodyDoc>('email_bodies', bodySchema),
    days: reportDayCollections(store, retention.reportDays),
    broadcasts: broadcastProgress(recipientCollections(store)),
  };
}

/** The email report's times, rolled up into daily aggregates before the records are pruned. */
export const rolledMessages = (c: MessageCollections): RolledLog<EmailMessageDoc> => ({ name: EMAIL_MESSAGES, collection: c.messages, fields: REPORT_TIME_FIELDS });


export interface MessageQuery {
  email?: string;
  templateName?: string;
  status?: MessageStatus;
  pageNumber: number;
  pageSize: number;
}

/**
 * One account's messages. Slices add the transitions they own (delivery, bounces, tracking) here.
 * Every status change reads the message as it was (findOneAndUpdate) so that a broadcast's mail
 * moves its recipient from the old status to the new one in the same transaction.
 */
export function messagesOf(c: MessageCollections, accountId: string) {
  const { messages, bodies, broadcasts } = c;
  const moved = async (before: EmailMessageDoc | null, to: MessageStatus, tx?: Transaction): Promise<boolean> => {
    if (!before) return false;
    await broadcasts.moved(before, before.status, to, tx);
    return true;
  };
  const firstHuman = async (message: Tracked, first: boolean, what: 'humanOpens' | 'humanClicks', tx: Transaction): Promise<boolean> => {
    if (first) await broadcasts.engaged(message, what, tx);
    return first;
  };
  return {
    accountId,
    get: (messageId: string): Promise<EmailMessageDoc | null> => messages.findOne({ _id: messageId, accountId }),
    body: (messageId: string): Promise<EmailBodyDoc | null> => bodies.findOne({ _id: messageId, accountId }),
    /** These messages (those that exist), in one read. */
    getMany: (messageIds: string[]): Promise<EmailMessageDoc[]> => (messageIds.length ? messages.find({ _id: { $in: messageIds }, accountId }) : Promise.resolve([])),
    /** The bodies of these messages (those still kept), in one read. */
    bodies: (messageIds: string[]): Promise<EmailBodyDoc[]> => (messageIds.length ? bodies.find({ _id: { $in: messageIds }, accountId }) : Promise.resolve([])),
    /** The message a send with this (non-empty) dedupe key created, or null. */
    byDedupeKey: (dedupeKey: string): Promise<EmailMessageDoc | null> => messages.findOne({ accountId, dedupeKey }),
    /** Stores a new message and (unless it is SUPPRESSED) its body, in one transaction when given. */
    async insert(doc: Omit<EmailMessageDoc, 'accountId'>, body: Omit<EmailBodyDoc, '_id' | 'accountId'> | null, tx?: Transaction): Promise<EmailMessageDoc> {
      const stored: EmailMessageDoc = { ...doc, accountId };
      await messages.insertOne(stored, { tx });
      if (body) await bodies.insertOne({ _id: doc._id, accountId, ...body }, { tx });
      return stored;
    },
    /** The messages sends with these (non-empty) dedupe keys created. */
    byDedupeKeys: (keys: string[]): Promise<Array<Pick<EmailMessageDoc, '_id' | 'dedupeKey' | 'status' | 'requestHash'>>> =>
      keys.length ? messages.find({ accountId, dedupeKey: { $in: keys } }, { projection: { _id: 1, dedupeKey: 1, status: 1, requestHash: 1 } }) : Promise.resolve([]),
    /** Stores new messages and the bodies of those not SUPPRESSED, all or nothing. */
    async insertMany(composed: Array<{ message: Omit<EmailMessageDoc, 'accountId'>; body: Omit<EmailBodyDoc, '_id' | 'accountId'> | null }>, tx: Transaction): Promise<void> {
      if (!composed.length) return;
      await messages.insertMany(composed.map(({ message }) => ({ ...message, accountId })), { tx });
      const withBody = composed.filter((c) => c.body);
      if (withBody.length) await bodies.insertMany(withBody.map(({ message, body }) => ({ _id: message._id, accountId, ...body! })), { tx });
    },
    /** Of these messages, those a human opened (a resend to non-openers leaves their readers out). */
    openedAmong: async (ids: string[]): Promise<Set<string>> =>
      new Set(ids.length ? (await messages.find({ accountId, _id: { $in: ids }, firstOpenedAt: { $ne: null } }, { projection: { _id: 1 } })).map((m) => m._id) : []),
    /** An audience send's messages, and how many of them were delivered. */
    async audienceCounts(audienceKey: string): Promise<{ queued: number; delivered: number }> {
      const [queued, delivered] = await Promise.all([
        messages.countDocuments({ accountId, audienceKey }),
        messages.countDocuments({ accountId, audienceKey, status: 'DELIVERED' }),
      ]);
      return { queued, delivered };
    },
    async list(q: MessageQuery): Promise<{ items: EmailMessageDoc[]; totalItems: number }> {
      const filter: AccountFilter = { accountId };
      if (q.email !== undefined) filter.email = q.email;
      if (q.templateName !== undefined) filter.templateName = q.templateName;
      if (q.status !== undefined) filter.status = q.status;
      const [items, totalItems] = await Promise.all([
        messages.find(filter, { sort: LIST_ORDER, skip: (q.pageNumber - 1) * q.pageSize, limit: q.pageSize }),
        messages.countDocuments(filter),
      ]);
      return { items, totalItems };
    },
    /** Drops the body once the message can no longer be sent. */
    dropBody: async (messageId: string, tx?: Transaction): Promise<void> => {
      await bodies.deleteOne({ _id: messageId, accountId }, { tx });
    },
    /** Drops the bodies of messages that can no longer be sent, in one write. */
    dropBodies: async (messageIds: string[], tx: Transaction): Promise<void> => {
      if (messageIds.length) await bodies.deleteMany({ _id: { $in: messageIds }, accountId }, { tx });
    },
    /**
     * Delivery: records an attempt STARTED and the sender's claim if the message is still as the
     * caller read it (same status, same claim or none: compare-and-set on the claim's token; the
     * caller decided from that read that it may send, see domain/delivery.ts mayTakeOver). Returns
     * the message as claimed, or null when it changed meanwhile.
     */
    async claimForSending(messageId: string, seen: { status: MessageStatus; claimToken: string | null }, claim: SendingClaim, tx?: Transaction): Promise<EmailMessageDoc | null> {
      const attempt: DeliveryAttempt = { at: claim.at, outcome: 'STARTED', smtpCode: null, response: null };
      // Equality terms only (a null token also matches a message without the field): the cheapest
      // filter for the embedded store, which compiles each one.
      return messages.findOneAndUpdate(
        { _id: messageId, accountId, status: seen.status, 'sending.token': seen.claimToken },
        { $set: { sending: claim }, $push: { attempts: attempt } },
        { returnDocument: 'after', tx },
      );
    },
    /**
     * Delivery: the address was suppressed after the message was accepted: SUPPRESSED instead of
     * sent (the API contract: never to a suppressed address), if the message is still as the caller read it.
     */
    async suppressBeforeSending(messageId: string, seen: { status: MessageStatus; claimToken: string | null }, reason: SuppressionReason, at: Date, tx?: Transaction): Promise<boolean> {
      const before = await messages.findOneAndUpdate(
        { _id: messageId, accountId, status: seen.status, 'sending.token': seen.claimToken },
        { $set: { status: 'SUPPRESSED', suppressionReason: reason, nextAttemptAt: null, sending: null }, $push: { history: { status: 'SUPPRESSED', at } } },
        { tx },
      );
      return moved(before, 'SUPPRESSED', tx);
    },
    /**
     * Delivery: writes the outcome of the claim `token` (its attempts, new statuses appended to the
     * history, times) and releases the claim. False when the claim was taken over meanwhile.
     */
    async settleAttempt(
      messageId: string,
      token: string,
      outcome: { attempts: DeliveryAttempt[]; statuses: Array<{ status: MessageStatus; at: Date }>; set?: Partial<Pick<EmailMessageDoc, 'sentAt' | 'deliveredAt' | 'nextAttemptAt'>> },
      tx?: Transaction,
    ): Promise<boolean> {
      const $set: Record<string, unknown> = { ...outcome.set, attempts: outcome.attempts, sending: null };
      const filter = { _id: messageId, accountId, 'sending.token': token };
      if (outcome.statuses.length === 0) return (await messages.updateOne(filter, { $set }, { tx })).matchedCount === 1;
      const to = outcome.statuses[outcome.statuses.length - 1].status;
      const before = await messages.findOneAndUpdate(filter, { $set: { ...$set, status: to }, $push: { history: { $each: outcome.statuses } } }, { tx });
      return moved(before, to, tx);
    },
    // Tracking (open pixel, click redirect): increments only ($inc), so concurrent requests all count
    // whatever the store; the first human open/click is set by a write conditioned on it being unset.
    /** Counts an open; true when it was the message's first human open (a broadcast's variant counts it). */
    async recordOpen(message: Tracked, machine: boolean, at: Date, tx: Transaction): Promise<boolean> {
      const filter = { _id: message._id, accountId };
      if (machine) {
        await messages.updateOne(filter, { $inc: { machineOpenCount: 1 } }, { tx });
        return false;
      }
      await messages.updateOne(filter, { $inc: { openCount: 1 } }, { tx });
      return firstHuman(message, (await messages.updateOne({ ...filter, firstOpenedAt: null }, { $set: { firstOpenedAt: at } }, { tx })).modifiedCount === 1, 'humanOpens', tx);
    },
    /** Counts a click; true when it was the message's first human click (a broadcast's variant counts it). */
    async recordClick(message: Tracked, machine: boolean, at: Date, tx: Transaction): Promise<boolean> {
      const filter = { _id: message._id, accountId };
      if (machine) {
        await messages.updateOne(filter, { $inc: { machineClickCount: 1 } }, { tx });
        return false;
      }
      await messages.updateOne(filter, { $inc: { clickCount: 1 } }, { tx });
      return firstHuman(message, (await messages.updateOne({ ...filter, firstClickedAt: null }, { $set: { firstClickedAt: at } }, { tx })).modifiedCount === 1, 'humanClicks', tx);
    },
    /** A human click on a message no human opened yet counts that open too; true when it did. */
    async recordImpliedOpen(message: Tracked, at: Date, tx: Transaction): Promise<boolean> {
      const update = { $set: { firstOpenedAt: at }, $inc: { openCount: 1 } };
      return firstHuman(message, (await messages.updateOne({ _id: message._id, accountId, firstOpenedAt: null }, update, { tx })).modifiedCount === 1, 'humanOpens', tx);
    },
    // ---- bounces and complaints (app/bounces.ts) ----
    /**
     * BOUNCED with the bounce's type and diagnostic code. A message bounces once; a hard bounce may
     * only replace a soft one (the relay gave up for good after all). False when nothing changed
     * (the same report again), so the caller records no effect twice.
     */
    async markBounced(messageId: string, bounce: { type: 'HARD' | 'SOFT'; diagnosticCode: string | null }, at: Date, tx: Transaction): Promise<boolean> {
      const filter = bounce.type === 'HARD' ? { 'bounce.type': { $ne: 'HARD' } } : { bounce: null };
      const before = await messages.findOneAndUpdate(
        { _id: messageId, accountId, ...filter },
        { $set: { status: 'BOUNCED', bouncedAt: at, bounce, nextAttemptAt: null }, $push: { history: { status: 'BOUNCED', at } } },
        { tx },
      );
      if (!(await moved(before, 'BOUNCED', tx))) return false;
      await bodies.deleteOne({ _id: messageId, accountId }, { tx });
      return true;
    },
    /** Records the recipient's spam complaint; false when it was recorded already. The status stays. */
    async markComplained(messageId: string, at: Date, tx: Transaction): Promise<boolean> {
      const r = await messages.updateOne({ _id: messageId, accountId, complainedAt: null }, { $set: { complainedAt: at } }, { tx });
      return r.matchedCount > 0;
    },
    /** SENT -> DELIVERED on a success DSN (MAIL_DELIVERY_CONFIRMATION=dsn); false unless the message was SENT. */
    async markDeliveredByDsn(messageId: string, at: Date, tx: Transaction): Promise<boolean> {
      const before = await messages.findOneAndUpdate(
        { _id: messageId, accountId, status: 'SENT' },
        { $set: { status: 'DELIVERED', deliveredAt: at }, $push: { history: { status: 'DELIVERED', at } } },
        { tx },
      );
      return moved(before, 'DELIVERED', tx);
    },
    /** When the address's other messages soft-bounced since `since` (the soft-bounce threshold's history). */
    async softBouncesSince(email: string, since: Date, exceptMessageId: string): Promise<Date[]> {
      const found = await messages.find(
        { accountId, email, bouncedAt: { $gte: since }, 'bounce.type': 'SOFT', _id: { $ne: exceptMessageId } },
        { projection: { bouncedAt: 1 }, sort: { bouncedAt: -1 }, limit: 100 },
      );
      return found.map((m) => m.bouncedAt as Date);
    },
    /** How many of the account's messages have `field` in each bucket [boundaries[i], boundaries[i + 1]) (reports; indexed per field). */
    countPerBucket: (field: ReportTimeField, boundaries: Date[]): Promise<number[]> =>
      countPerBucketWithDays(c.days, EMAIL_MESSAGES, accountId, `${EMAIL_MESSAGES}.${field}`, boundaries, async (b) =>
        countsPerBucket(await messages.aggregate(bucketCountPipeline(accountId, field, b)), b),
      ),
  };
}

/**
 * Cross-account: the account of a message named only by its id (a bounce report's VERP address
 * carries the message id alone; the id is unique across accounts).
 */
export async function messageAccountAllAccounts(c: MessageCollections, messageId: string): Promise<string | null> {
  const found = await acrossAccounts(c.messages).findOne({ _id: messageId }, { projection: { accountId: 1 } });
  return found?.accountId ?? null;
}
export type MessageRepository = ReturnType<typeof messagesOf>;

/** What tracking knows of the message it counts an open or click of. */
type Tracked = Pick<EmailMessageDoc, '_id'> & BroadcastMail;
