/**
 * Purchase sources (collection 'purchase_sources'), the ids of ingested orders ('purchase_orders') and
 * the orders waiting for their contact ('pending_orders').
 *
 * - Source names are unique per account (unique index {accountId, name}, exact after trimming).
 * - Order ingest is idempotent per (accountId, sourceId, orderId): unique index on purchase_orders. The
 *   order itself lives on the contact (Contact.orders, via toContactOrder), so segment queries stay
 *   one collection; an order whose email has no contact yet waits in pending_orders (keyed by
 *   {accountId, email}) and is attached by the projection when a contact with that email is applied.
 */
import { conflict } from '@mailer/kit';
import { Collection, DuplicateKeyError, Store, mongoose } from '@mailer/store';
import type { ContactOrder } from '../domain/contact';
import type { ProjectedContact } from './contacts';

const { Schema } = mongoose;

export interface PurchaseSourceDoc {
  _id: string;
  accountId: string;
  name: string;
  timeZone: string;
  capturedOrdersFromUtc: Date;
  capturedOrdersToUtc: Date | null;
  baselineOpen: boolean;
  attributionStartedAtUtc: Date;
  createdAt: Date;
}

const sourceSchema = new Schema(
  {
    _id: String,
    accountId: { type: String, required: true },
    name: { type: String, required: true },
    timeZone: { type: String, required: true },
    capturedOrdersFromUtc: { type: Date, required: true },
    capturedOrdersToUtc: { type: Date, default: null },
    baselineOpen: { type: Boolean, required: true },
    attributionStartedAtUtc: { type: Date, required: true },
    createdAt: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
sourceSchema.index({ accountId: 1, name: 1 }, { unique: true });

/** One ingested order id (the idempotency record). */
export interface OrderIdDoc {
  _id: string;
  accountId: string;
  sourceId: string;
  orderId: string;
  email: string;
  ingestedAt: Date;
}
const orderIdSchema = new Schema(
  {
    _id: String,
    accountId: { type: String, required: true },
    sourceId: { type: String, required: true },
    orderId: { type: String, required: true },
    email: { type: String, required: true },
    ingestedAt: { type: Date, required: true },
  },
  { versionKey: false },
);
orderIdSchema.index({ accountId: 1, sourceId: 1, orderId: 1 }, { unique: true });

/** An accepted order whose email had no contact yet. */
export interface PendingOrderDoc {
  _id: string;
  accountId: string;
  /** Canonical (trimmed, lower-case) email. */
  email: string;
  order: ContactOrder;
}
const pendingSchema = new Schema(
  {
    _id: String,
    accountId: { type: String, required: true },
    email: { type: String, required: true },
    order: { type: Schema.Types.Mixed, required: true },
  },
  { versionKey: false, minimize: false },
);
pendingSchema.index({ accountId: 1, email: 1 });

export interface PurchaseCollections {
  sources: Collection<PurchaseSourceDoc>;
  orderIds: Collection<OrderIdDoc>;
  pending: Collection<PendingOrderDoc>;
}

export function purchaseCollections(store: Store): PurchaseCollections {
  return {
    sources: store.collection<PurchaseSourceDoc>('purchase_sources', sourceSchema),
    orderIds: store.collection<OrderIdDoc>('purchase_orders', orderIdSchema),
    pending: store.collection<PendingOrderDoc>('pending_orders', pendingSchema),
  };
}

/** The canonical email orders are matched by (the projection stores contacts' emails lower-cased). */
export function canonicalEmail(email: string): string {
  return email.trim().toLowerCase();
}

const sourceNameTaken = (name: string) =>
  conflict('purchase_source_name_taken', `a purchase source named "${name}" already exists`, [{ path: 'name', problem: 'already used by another purchase source' }]);

/** What an order's ingest needs of the contact projection (store/contact-projection.ts ContactProjection). */
export interface OrderTarget {
  store: Store;
  contacts: Collection<ProjectedContact>;
}

/**
 * One account's purchase sources and ingested orders. Every query filters by the account first; a
 * source-name clash is translated here into `409 purchase_source_name_taken`.
 */
export function purchaseSourcesOf(purchases: PurchaseCollections, accountId: string) {
  const { sources, orderIds, pending } = purchases;
  return {
    accountId,
    /** The account's sources, oldest first. */
    list: (): Promise<PurchaseSourceDoc[]> => sources.find({ accountId }, { sort: { createdAt: 1, _id: 1 } }),
    get: (id: string): Promise<PurchaseSourceDoc | null> => sources.findOne({ _id: id, accountId }),
    async insert(doc: Omit<PurchaseSourceDoc, 'accountId'>): Promise<PurchaseSourceDoc> {
      const stored: PurchaseSourceDoc = { ...doc, accountId };
      try {
        await sources.insertOne(stored);
      } catch (err) {
        if (err instanceof DuplicateKeyError) throw sourceNameTaken(doc.name);
        throw err;
      }
      return stored;
    },
    setBaseline: async (id: string, set: Pick<PurchaseSourceDoc, 'capturedOrdersFromUtc' | 'baselineOpen'>): Promise<void> => {
      await sources.updateOne({ _id: id, accountId }, { $set: set });
    },
    /**
     * Records one order once per (source, orderId): onto the contact with its email, or into
     * pending_orders until that contact exists. 'duplicate' when the order id was ingested before.
     * Call under the projection's account lock.
     */
    async ingestOrder(target: OrderTarget, o: { id: string; sourceId: string; orderId: string; email: string; order: ContactOrder; at: Date }): Promise<'accepted' | 'duplicate'> {
      try {
        await target.store.transaction(async (tx) => {
          await orderIds.insertOne({ _id: o.id, accountId, sourceId: o.sourceId, orderId: o.orderId, email: o.email, ingestedAt: o.at }, { tx });
          const contact = await target.contacts.findOne({ accountId, email: o.email }, { projection: { _id: 1 } });
          if (contact) await target.contacts.updateOne({ _id: contact._id, accountId }, { $push: { orders: o.order } }, { tx });
          else await pending.insertOne({ _id: o.id, accountId, email: o.email, order: o.order }, { tx });
        });
        return 'accepted';
      } catch (err) {
        if (!(err instanceof DuplicateKeyError)) throw err;
        return 'duplicate';
      }
    },
  };
}
export type PurchaseSourceRepository = ReturnType<typeof purchaseSourcesOf>;
