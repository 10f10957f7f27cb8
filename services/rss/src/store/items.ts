// What each newsletter has seen of its feed (collection 'rss_items'): one row per item key. SEEN rows
// (the baseline, items already in an issue, expired or rebaselined ones) keep only key and link;
// PENDING rows (found by a poll, waiting for an issue) keep the item. Every query is scoped to one
// account and newsletter.
import { createHash } from 'node:crypto';
import { mongoose, type Store, type Transaction } from '@mailer/store';
import type { ItemSnapshot, PendingItem, SeenItems } from '../domain/issues';

const { Schema } = mongoose;

export interface ItemDoc {
  /** newsletterId + '|' + sha256(key): inserting an item twice finds the first row. */
  _id: string;
  accountId: string;
  newsletterId: string;
  key: string;
  link: string;
  state: 'SEEN' | 'PENDING';
  item: ItemSnapshot | null;
  foundAt: Date;
  /** Position in the read that found it: items of one read keep the feed's order (newest first). */
  seq: number;
}

export const ITEMS = 'rss_items';

const itemSnapshotSchema = new Schema(
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

export const itemSchema = new Schema(
  {
    _id: { type: String, required: true },
    accountId: { type: String, required: true },
    newsletterId: { type: String, required: true },
    key: { type: String, required: true },
    link: { type: String, default: '' },
    state: { type: String, required: true, enum: ['SEEN', 'PENDING'] },
    item: { type: itemSnapshotSchema, default: null },
    foundAt: { type: Date, required: true },
    seq: { type: Number, default: 0 },
  },
  { versionKey: false, minimize: false },
);
itemSchema.index({ accountId: 1, newsletterId: 1, state: 1 });

const rowId = (newsletterId: string, key: string) => `${newsletterId}|${createHash('sha256').update(key).digest('base64url')}`;

export interface ItemRepository {
  seen(accountId: string, newsletterId: string): Promise<SeenItems>;
  /** Marks the items seen (never to be mailed); rows that exist keep their state. */
  markSeen(accountId: string, newsletterId: string, items: ReadonlyArray<Pick<ItemSnapshot, 'key' | 'link'>>, now: Date, opts?: { tx?: Transaction }): Promise<void>;
  /** Queues new items for the next issue. */
  addPending(accountId: string, newsletterId: string, items: readonly ItemSnapshot[], now: Date, opts?: { tx?: Transaction }): Promise<void>;
  pending(accountId: string, newsletterId: string): Promise<PendingItem[]>;
  countPending(accountId: string, newsletterId: string): Promise<number>;
  /** PENDING rows by newsletter, in one query (a newsletter with none is absent). */
  countPendingByNewsletter(accountId: string, newsletterIds: readonly string[]): Promise<Map<string, number>>;
  /** PENDING -> SEEN (in an issue, or expired); the number of rows that were still PENDING. */
  settle(accountId: string, newsletterId: string, keys: readonly string[], opts?: { tx?: Transaction }): Promise<number>;
  deleteAll(accountId: string, newsletterId: string): Promise<void>;
}

export function itemRepository(store: Store): ItemRepository {
  const items = store.collection<ItemDoc>(ITEMS, itemSchema);
  return {
    async seen(accountId, newsletterId) {
      const docs = await items.find({ accountId, newsletterId }, { projection: { key: 1, link: 1 } });
      return { keys: new Set(docs.map((d) => d.key)), links: new Set(docs.map((d) => d.link).filter((l) => l !== '')) };
    },
    async markSeen(accountId, newsletterId, seen, now, opts) {
      if (seen.length === 0) return;
      await items.bulkWrite(
        seen.map((i) => ({
          updateOne: {
            filter: { accountId, _id: rowId(newsletterId, i.key) },
            update: { $setOnInsert: { newsletterId, key: i.key, link: i.link, state: 'SEEN', item: null, foundAt: now, seq: 0 } },
            upsert: true,
          },
        })),
        opts,
      );
    },
    async addPending(accountId, newsletterId, found, now, opts) {
      if (found.length === 0) return;
      await items.bulkWrite(
        found.map((i, seq) => ({
          updateOne: {
            filter: { accountId, _id: rowId(newsletterId, i.key) },
            update: { $setOnInsert: { newsletterId, key: i.key, link: i.link, state: 'PENDING', item: i, foundAt: now, seq } },
            upsert: true,
          },
        })),
        opts,
      );
    },
    async pending(accountId, newsletterId) {
      const docs = await items.find({ accountId, newsletterId, state: 'PENDING' }, { sort: { foundAt: 1, seq: 1 } });
      return docs.flatMap((d) => (d.item ? [{ ...d.item, foundAt: d.foundAt }] : []));
    },
    countPending(accountId, newsletterId) {
      return items.countDocuments({ accountId, newsletterId, state: 'PENDING' });
    },
    async countPendingByNewsletter(accountId, newsletterIds) {
      if (newsletterIds.length === 0) return new Map();
      const rows = await items.aggregate<{ _id: string; n: number }>([
        { $match: { accountId, newsletterId: { $in: [...newsletterIds] }, state: 'PENDING' } },
        { $group: { _id: '$newsletterId', n: { $sum: 1 } } },
      ]);
      return new Map(rows.map((r) => [r._id, r.n]));
    },
    async settle(accountId, newsletterId, keys, opts) {
      if (keys.length === 0) return 0;
      const ids = keys.map((k) => rowId(newsletterId, k));
      const r = await items.updateMany({ _id: { $in: ids }, accountId, newsletterId, state: 'PENDING' }, { $set: { state: 'SEEN', item: null } }, opts);
      return r.modifiedCount;
    },
    async deleteAll(accountId, newsletterId) {
      await items.deleteMany({ accountId, newsletterId });
    },
  };
}
