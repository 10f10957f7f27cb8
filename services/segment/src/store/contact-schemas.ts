/**
 * The contact projection's collections: contacts (one Contact per subscriber, see domain/contact.ts),
 * the tombstones of deleted subscribers, and the per-account record of catalog events
 * (contact-projection-apply.ts explains how they are kept).
 */
import { Collection, Store, mongoose } from '@mailer/store';
import type { Contact } from '../domain/contact';

const { Schema } = mongoose;

const orderItemSchema = new Schema({ productId: { type: String, required: true }, variantId: String, groupId: String }, { _id: false });
const orderSchema = new Schema(
  {
    orderId: { type: String, required: true },
    sourceId: { type: String, required: true },
    orderedAt: { type: Date, required: true },
    currency: { type: String, required: true },
    amount: { type: Number, required: true },
    couponCode: String,
    items: [orderItemSchema],
  },
  { _id: false },
);

/** ContactFieldValue: exactly one of these members is set. */
const fieldValueSchema = new Schema(
  { text: String, folded: String, number: Number, date: String, boolean: Boolean, optionId: String, optionIds: { type: [String], default: undefined } },
  { _id: false },
);

export const contactSchema = new Schema(
  {
    _id: String,
    accountId: { type: String, required: true },
    email: { type: String, required: true },
    firstName: String,
    subscriberStatus: { type: String, required: true },
    registeredAt: { type: Date, required: true },
    tags: [String],
    topics: [String],
    optOuts: [new Schema({ topicId: String, at: Date }, { _id: false })],
    // Keys are field ids (or EMAIL, FIRST_NAME), values one typed member each (domain/contact.ts). Typed,
    // not Mixed: the embedded store then compares a field condition in SQL instead of decoding every
    // contact into JavaScript to test it.
    fields: { type: Map, of: fieldValueSchema, default: {} },
    orders: [orderSchema],
    lastDeliveredAt: Date,
    lastResponseAt: Date,
    firstUnansweredDeliveryAt: Date,
    // Projection bookkeeping: the subscriber version applied, and the DOMAIN stream sequence it came from.
    version: Number,
    seq: Number,
  },
  { versionKey: false, minimize: false },
);
// Every segment query is scoped to one account, so accountId leads every index.
contactSchema.index({ accountId: 1, registeredAt: 1, _id: 1 });
// Audience pages (ListSegmentAudience): ACTIVE contacts in id order after a cursor, a range walk.
contactSchema.index({ accountId: 1, subscriberStatus: 1, _id: 1 });
contactSchema.index({ accountId: 1, email: 1 });
contactSchema.index({ accountId: 1, tags: 1 });
contactSchema.index({ accountId: 1, topics: 1 });
// Segment conditions (docs/operations.md "Segment queries on MongoDB (indexes)"): PURCHASES conditions are one
// $elemMatch per zone on sourceId + orderedAt (multikey over the embedded orders, bounds compounded
// within the element); TOPIC_OPTED_OUT reads optOuts.topicId.
contactSchema.index({ accountId: 1, 'orders.sourceId': 1, 'orders.orderedAt': 1 });
contactSchema.index({ accountId: 1, 'optOuts.topicId': 1 });

/** A contact as stored by the projection. */
export type ProjectedContact = Contact & { version?: number; seq?: number };

export interface ContactTombstone {
  _id: string;
  accountId: string;
  version: number;
}
export const tombstoneSchema = new Schema({ _id: String, accountId: { type: String, required: true }, version: { type: Number, required: true } }, { versionKey: false });
tombstoneSchema.index({ accountId: 1 });

export interface ProjectionCatalog {
  /** The account id. */
  _id: string;
  deletedTags: string[];
  deletedTopics: string[];
  deletedFields: string[];
  enrollments: Array<{ topicId: string; seq: number }>;
}
export const catalogSchema = new Schema(
  {
    _id: String,
    deletedTags: [String],
    deletedTopics: [String],
    deletedFields: [String],
    enrollments: [new Schema({ topicId: String, seq: Number }, { _id: false })],
  },
  { versionKey: false, minimize: false },
);

export function contactsCollection(store: Store): Collection<ProjectedContact> {
  // the number of contacts per account, kept: the embedded store walks the table in order for a
  // segment count over an account that holds most of it (and answers an account's total at once)
  return store.collection<ProjectedContact>('contacts', contactSchema, { countBy: 'accountId' });
}

export function tombstonesCollection(store: Store): Collection<ContactTombstone> {
  return store.collection<ContactTombstone>('contact_tombstones', tombstoneSchema);
}

export function projectionCatalogCollection(store: Store): Collection<ProjectionCatalog> {
  return store.collection<ProjectionCatalog>('projection_catalog', catalogSchema);
}
