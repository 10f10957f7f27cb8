/**
 * A real embedded store holding Contact documents, for executing compiled filters in tests.
 * The schema is the shape the projection is expected to declare (types matter: filters are cast
 * through it, as mongoose does on MongoDB).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Collection, Store, mongoose, openStore } from '@mailer/store';
import type { Contact } from '../../src/domain/contact';

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
    // Keys are field ids: a Mixed map of typed values ({text, folded} | {number} | ...).
    fields: { type: Schema.Types.Mixed, default: {} },
    orders: [orderSchema],
    lastDeliveredAt: Date,
    lastResponseAt: Date,
    firstUnansweredDeliveryAt: Date,
  },
  { versionKey: false, minimize: false },
);

export interface ContactStore {
  store: Store;
  contacts: Collection<Contact>;
  close(): Promise<void>;
}

export async function openContactStore(): Promise<ContactStore> {
  const dir = mkdtempSync(join(tmpdir(), 'segment-test-'));
  const store = await openStore({ dataDir: dir });
  const contacts = store.collection<Contact>('contacts', contactSchema);
  return {
    store,
    contacts,
    async close() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
