// Where every reader of a broadcast's audience went: one row per reader ('broadcast_recipients', a
// recipient with its mail's status, or EXCLUDED with the reason) and the broadcast's tally
// ('broadcast_tallies'): the reconciliation's counts.
//
// Why the reconciliation adds up at every moment, during the send too: every change of a reader's
// place is ONE $inc on ONE tally document that moves the reader from one count to another (a
// page decided: audience and recipients or excluded; a message's status changed: out of the old
// status, into the new one), written in the same transaction as the row and the message. Each tally
// document therefore satisfies `audience = recipients + sum(excluded)` and `recipients = sum(status)`
// on its own, after every write; so does any sum of them, however the reads of several documents
// interleave with writes. The tally is split in SHARDS documents by reader (a reader's changes always
// land in the same one), so concurrent deliveries do not all write one hot document.
import { mongoose, type AccountFilter, type BulkOp, type Collection, type Store, type Transaction } from '@mailer/store';
import type { ExclusionReason, ReaderStatus, RecipientStatus, VariantStats } from '../domain/broadcast';
import { EXCLUSION_REASONS, RECIPIENT_STATUSES, recipientStatusOf } from '../domain/broadcast';

const { Schema } = mongoose;

export interface RecipientDoc {
  _id: string; // `${broadcastId}:${subscriberId}`
  accountId: string;
  broadcastId: string;
  subscriberId: string;
  email: string;
  status: ReaderStatus;
  reason: ExclusionReason | null;
  /** The A/B variant (subject index); null without an A/B test, and for the rest until the winner is decided. */
  variant: number | null;
  messageId: string | null;
  /** A recipient whose mail is not queued yet: when it may be (its send window, the A/B decision). */
  dueAt: Date | null;
}

interface VariantCounts {
  recipients: number;
  delivered: number;
  humanOpens: number;
  humanClicks: number;
}

export interface TallyDoc {
  _id: string; // `${broadcastId}:${shard}`
  accountId: string;
  broadcastId: string;
  audience: number;
  recipients: number;
  status: Record<RecipientStatus, number>;
  excluded: Record<ExclusionReason, number>;
  variants: Record<string, VariantCounts>;
}

export interface Reconciliation {
  audience: number;
  excluded: Record<ExclusionReason, number>;
  recipients: number;
  status: Record<RecipientStatus, number>;
}

/** A broadcast's reconciliation and its variants' counts, summed over its tally documents. */
export interface BroadcastTally {
  reconciliation: Reconciliation;
  variants: Array<VariantStats & { recipients: number }>;
}

function tallyOf(docs: readonly TallyDoc[]): BroadcastTally {
  const total: Reconciliation = { audience: 0, recipients: 0, excluded: zeros(EXCLUSION_REASONS), status: zeros(RECIPIENT_STATUSES) };
  const variants: Array<VariantStats & { recipients: number }> = [];
  for (const d of docs) {
    total.audience += d.audience;
    total.recipients += d.recipients;
    for (const r of EXCLUSION_REASONS) total.excluded[r] += d.excluded[r] ?? 0;
    for (const s of RECIPIENT_STATUSES) total.status[s] += d.status[s] ?? 0;
    for (const [key, v] of Object.entries(d.variants ?? {})) {
      const i = Number(key.slice(1));
      const sum = (variants[i] ??= { recipients: 0, delivered: 0, humanOpens: 0, humanClicks: 0 });
      sum.recipients += v.recipients;
      sum.delivered += v.delivered;
      sum.humanOpens += v.humanOpens;
      sum.humanClicks += v.humanClicks;
    }
  }
  return { reconciliation: total, variants };
}

const recipientSchema = new Schema(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    broadcastId: { type: String, required: true },
    subscriberId: { type: String, required: true },
    email: { type: String, required: true },
    status: { type: String, required: true },
    reason: { type: String, default: null },
    variant: { type: Number, default: null },
    messageId: { type: String, default: null },
    dueAt: { type: Date, default: null },
  },
  { versionKey: false, minimize: false },
);
// The recipient list (by subscriber id: the _id's order within a broadcast), by status or variant.
recipientSchema.index({ accountId: 1, broadcastId: 1, _id: 1 });
recipientSchema.index({ accountId: 1, broadcastId: 1, status: 1, _id: 1 });
recipientSchema.index({ accountId: 1, broadcastId: 1, variant: 1, _id: 1 });
// Recipients whose mail waits (a send window, the A/B winner), by when it may be queued.
recipientSchema.index({ accountId: 1, broadcastId: 1, dueAt: 1 });

const tallySchema = new Schema(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    broadcastId: { type: String, required: true },
    audience: { type: Number, default: 0 },
    recipients: { type: Number, default: 0 },
    status: { type: Schema.Types.Mixed, required: true },
    excluded: { type: Schema.Types.Mixed, required: true },
    variants: { type: Schema.Types.Mixed, required: true },
  },
  { versionKey: false, minimize: false },
);
tallySchema.index({ accountId: 1, broadcastId: 1 });

/** Tally documents per broadcast. */
export const SHARDS = 8;

export const rowId = (broadcastId: string, subscriberId: string) => `${broadcastId}:${subscriberId}`;
const shardOf = (subscriberId: string) => subscriberId.charCodeAt(subscriberId.length - 1) % SHARDS;
const tallyId = (broadcastId: string, subscriberId: string) => `${broadcastId}:${shardOf(subscriberId)}`;
const zeros = <K extends string>(keys: readonly K[]) => Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;

export interface RecipientCollections {
  rows: Collection<RecipientDoc>;
  tallies: Collection<TallyDoc>;
}

export const recipientCollections = (store: Store): RecipientCollections => ({
  rows: store.collection<RecipientDoc>('broadcast_recipients', recipientSchema),
  tallies: store.collection<TallyDoc>('broadcast_tallies', tallySchema),
});

/**
 * The $inc of a set of changes, per tally document: add() one reader's move at a time, then write
 * them all with write() (one update per document touched).
 */
export class TallyMoves {
  private readonly incs = new Map<string, Record<string, number>>();

  constructor(private readonly accountId: string, private readonly broadcastId: string) {}

  add(subscriberId: string, changes: Record<string, number>): this {
    const id = tallyId(this.broadcastId, subscriberId);
    const inc = this.incs.get(id) ?? {};
    for (const [path, n] of Object.entries(changes)) inc[path] = (inc[path] ?? 0) + n;
    this.incs.set(id, inc);
    return this;
  }

  ops(): BulkOp<AccountFilter>[] {
    return [...this.incs].map(([_id, $inc]) => ({ updateOne: { filter: { _id, accountId: this.accountId }, update: { $inc } } }));
  }
}

/** The tally paths of a reader decided: a recipient (its status PENDING) or an excluded reader. */
export const decided = (reason: ExclusionReason | null, variant: number | null): Record<string, number> =>
  reason ? { audience: 1, [`excluded.${reason}`]: 1 } : { audience: 1, recipients: 1, 'status.PENDING': 1, ...(variant === null ? {} : { [`variants.v${variant}.recipients`]: 1 }) };

/** A waiting recipient excluded when its mail was to be queued (the rules checked again): it moves to excluded. */
export const excludedLater = (reason: ExclusionReason, variant: number | null): Record<string, number> => ({
  recipients: -1,
  'status.PENDING': -1,
  [`excluded.${reason}`]: 1,
  ...(variant === null ? {} : { [`variants.v${variant}.recipients`]: -1 }),
});

export function recipientsOf(c: RecipientCollections, accountId: string) {
  const { rows, tallies } = c;
  return {
    /** The tally documents of a broadcast that starts sending (all counts 0). */
    async open(broadcastId: string, variantCount: number, tx: Transaction): Promise<void> {
      const variants = Object.fromEntries(Array.from({ length: variantCount }, (_, i) => [`v${i}`, { recipients: 0, delivered: 0, humanOpens: 0, humanClicks: 0 }]));
      const docs = Array.from({ length: SHARDS }, (_, shard): TallyDoc => ({
        _id: `${broadcastId}:${shard}`, accountId, broadcastId, audience: 0, recipients: 0, status: zeros(RECIPIENT_STATUSES), excluded: zeros(EXCLUSION_REASONS), variants,
      }));
      await tallies.insertMany(docs, { tx });
    },
    /** Rows and tally changes of one step of a send, in the step's transaction. */
    async write(moves: TallyMoves, changes: { insert?: RecipientDoc[]; update?: BulkOp<AccountFilter>[]; remove?: string[] }, tx: Transaction): Promise<void> {
      if (changes.insert?.length) await rows.insertMany(changes.insert, { tx });
      if (changes.update?.length) {
        const r = await rows.bulkWrite(changes.update, { tx });
        if (r.matchedCount !== changes.update.length) throw new RecipientChanged();
      }
      if (changes.remove?.length && (await rows.deleteMany({ accountId, _id: { $in: changes.remove }, messageId: null }, { tx })) !== changes.remove.length) throw new RecipientChanged();
      const ops = moves.ops();
      if (ops.length) await tallies.bulkWrite(ops, { tx });
    },
    async reconciliation(broadcastId: string): Promise<BroadcastTally> {
      return tallyOf(await tallies.find({ accountId, broadcastId }));
    },
    /** The tallies of several broadcasts, in one query. */
    async reconciliations(broadcastIds: readonly string[]): Promise<Map<string, BroadcastTally>> {
      if (broadcastIds.length === 0) return new Map();
      const docs = await tallies.find({ accountId, broadcastId: { $in: [...broadcastIds] } });
      return new Map(broadcastIds.map((id) => [id, tallyOf(docs.filter((d) => d.broadcastId === id))]));
    },
    /** Waiting recipients whose mail may be queued by `now` (with `decided` false, only those whose variant is known). */
    due: (broadcastId: string, now: Date, limit: number, winnerKnown: boolean): Promise<RecipientDoc[]> =>
      rows.find({ accountId, broadcastId, dueAt: { $lte: now }, ...(winnerKnown ? {} : { variant: { $ne: null } }) }, { sort: { dueAt: 1 }, limit }),
    /** The earliest time a waiting recipient may be queued, or null when none waits. */
    async nextDue(broadcastId: string): Promise<Date | null> {
      const [next] = await rows.find({ accountId, broadcastId, dueAt: { $ne: null } }, { sort: { dueAt: 1 }, limit: 1, projection: { dueAt: 1 } });
      return next?.dueAt ?? null;
    },
    /** Recipients of a cancelled broadcast whose mail was never queued (they get none). */
    unqueued: (broadcastId: string, limit: number): Promise<RecipientDoc[]> => rows.find({ accountId, broadcastId, status: 'PENDING', messageId: null }, { limit }),
    /** A page of readers after `after` (a row id) with one of these statuses, by subscriber id (a resend's source). */
    after: (broadcastId: string, status: ReaderStatus, after: string, limit: number): Promise<RecipientDoc[]> =>
      rows.find({ accountId, broadcastId, status, ...(after ? { _id: { $gt: after } } : {}) }, { sort: { _id: 1 }, limit }),
    async page(broadcastId: string, q: { status?: ReaderStatus; variant?: number }, pageNumber: number, pageSize: number): Promise<{ items: RecipientDoc[]; total: number }> {
      const filter = { accountId, broadcastId, ...(q.status ? { status: q.status } : {}), ...(q.variant === undefined ? {} : { variant: q.variant }) };
      const [items, total] = await Promise.all([rows.find(filter, { sort: { _id: 1 }, skip: (pageNumber - 1) * pageSize, limit: pageSize }), rows.countDocuments(filter)]);
      return { items, total };
    },
  };
}
export type RecipientRepository = ReturnType<typeof recipientsOf>;

/** A row was changed by someone else between the read and the write (another replica's step, a cancel): the step gives way. */
export class RecipientChanged extends Error {
  constructor() {
    super('a broadcast recipient changed during the step');
  }
}

/** The members of a message the broadcast's bookkeeping reads. */
export type BroadcastMail = { accountId: string; broadcastId?: string | null; audienceKey?: string | null; subscriberId: string | null; variant?: number | null };

/** A mail of a broadcast's audience (not a test send, which has no audience key): its changes are the broadcast's. */
const ofAudience = (m: BroadcastMail): m is BroadcastMail & { broadcastId: string; subscriberId: string } => !!m.broadcastId && !!m.audienceKey && !!m.subscriberId;

/**
 * Keeps a broadcast's rows and tally in step with its messages: called by the message store in the
 * transaction of every status change, and of every first human open or click.
 */
export function broadcastProgress(c: RecipientCollections) {
  return {
    async moved(m: BroadcastMail, from: string, to: string, tx?: Transaction): Promise<void> {
      if (!ofAudience(m)) return;
      const [before, after] = [recipientStatusOf(from), recipientStatusOf(to)];
      const delivered = to === 'DELIVERED' && from !== 'DELIVERED' && m.variant != null;
      if (before === after && !delivered) return;
      const inc: Record<string, number> = before === after ? {} : { [`status.${before}`]: -1, [`status.${after}`]: 1 };
      if (delivered) inc[`variants.v${m.variant}.delivered`] = 1;
      await c.rows.updateOne({ _id: rowId(m.broadcastId, m.subscriberId), accountId: m.accountId }, { $set: { status: after } }, { tx });
      await c.tallies.updateOne({ _id: tallyId(m.broadcastId, m.subscriberId), accountId: m.accountId }, { $inc: inc }, { tx });
    },
    async engaged(m: BroadcastMail, what: 'humanOpens' | 'humanClicks', tx: Transaction): Promise<void> {
      if (!ofAudience(m) || m.variant == null) return;
      await c.tallies.updateOne({ _id: tallyId(m.broadcastId, m.subscriberId), accountId: m.accountId }, { $inc: { [`variants.v${m.variant}.${what}`]: 1 } }, { tx });
    },
  };
}
export type BroadcastProgress = ReturnType<typeof broadcastProgress>;
