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
import { Collection, Store, mongoose } from '@mailer/store';
import type { ContactOrder } from '../domain/contact';

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
