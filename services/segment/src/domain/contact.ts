/**
 * The Contact document: the segment service's own projection of one subscriber (one per subscriber,
 * `_id` = subscriberId), holding every fact a segment condition can read, so that a compiled segment
 * is one MongoDB query over one collection. Plain data, indexable (see compile.ts for the paths used).
 *
 * Invariants the projection keeps (the helpers below produce them, and the evaluator relies on them):
 * - `fields` holds one entry per field that HAS a value, keyed by fieldKey(): the custom field's id, or
 *   'EMAIL' / 'FIRST_NAME' for the built-ins (mirrors of `email` / `firstName`). An empty value (no value,
 *   '' text, no selected option) has no entry at all.
 * - Text values carry a case-folded copy, so case-insensitive operators compare plain strings (and can
 *   use an index) instead of relying on regex case folding, which differs between engines.
 * - Instants are BSON Dates (UTC); LocalDates are 'YYYY-MM-DD' strings (they sort correctly as strings).
 */
import type { FieldValueJson } from '@mailer/nats/facts';
import type { BuiltInField, FieldRef } from './expression';

export type ContactFieldValue =
  /** TEXT, LONG_TEXT and EMAIL fields; `folded` = foldCase(text). */
  | { text: string; folded: string }
  | { number: number }
  /** LocalDate. */
  | { date: string }
  | { boolean: boolean }
  | { optionId: string }
  /** Never empty. */
  | { optionIds: string[] };

export interface ContactOrderItem {
  productId: string;
  variantId?: string | null;
  groupId?: string | null;
}

/**
 * One purchase order of the contact (matched by email at ingest). The period of a condition is read in
 * the source's zone at query time (compile.ts turns local dates into instants per zone), so a change of
 * a source's zone needs no rewrite of stored orders.
 */
export interface ContactOrder {
  orderId: string;
  sourceId: string;
  orderedAt: Date;
  /** ISO 4217, upper case. */
  currency: string;
  amount: number;
  /** foldCouponCode(code), or null when no coupon was used. */
  couponCode?: string | null;
  items: ContactOrderItem[];
}

export interface ContactOptOut {
  topicId: string;
  at: Date;
}

export interface Contact {
  /** The subscriber id. */
  _id: string;
  accountId: string;
  /** Canonical lowercase address (also in fields.EMAIL). */
  email: string;
  /** null means none (then fields.FIRST_NAME is absent). */
  firstName: string | null;
  subscriberStatus: string;
  registeredAt: Date;
  tags: string[];
  /** Topics the subscriber is currently subscribed to. */
  topics: string[];
  /** Current explicit opt-outs (removed when a topic is reactivated with overrideOptOuts). */
  optOuts: ContactOptOut[];
  fields: Record<string, ContactFieldValue>;
  orders: ContactOrder[];
  /** Latest delivery of any email to the contact (messaging's email.delivered); absent: never delivered. */
  lastDeliveredAt?: Date | null;
  /** Latest open or click (email.opened / email.clicked); absent: never responded. */
  lastResponseAt?: Date | null;
  /**
   * The earliest delivery after the latest response (the start of the current silence); absent when
   * every delivery has been answered or there was none. Set on a delivery when absent, cleared on a
   * response.
   */
  firstUnansweredDeliveryAt?: Date | null;
}

/** The key of a field in Contact.fields. */
export function fieldKey(ref: FieldRef): string {
  return ref.type === 'BUILT_IN' ? ref.builtInField : ref.fieldId;
}

/** The built-in fields' keys, for the projection writing email and first name into `fields`. */
export const BUILT_IN_KEYS: Readonly<Record<BuiltInField, string>> = { EMAIL: 'EMAIL', FIRST_NAME: 'FIRST_NAME' };

/**
 * Case folding for the case-insensitive text operators: Unicode lower-casing, locale-independent
 * (String.prototype.toLowerCase), applied identically to stored values and operands.
 */
export function foldCase(text: string): string {
  return text.toLowerCase();
}

/** Coupon codes are matched case-insensitively and without surrounding blanks, as shops treat them. */
export function foldCouponCode(code: string): string {
  return code.trim().toLowerCase();
}

export function textValue(text: string): ContactFieldValue {
  return { text, folded: foldCase(text) };
}

/** A typed field value as the subscriber service carries it (defined with the facts, @mailer/nats/facts). */
export type SubscriberFieldValue = FieldValueJson;

/** The stored form of a subscriber's field value, or undefined when it is empty (then nothing is stored). */
export function toContactFieldValue(value: SubscriberFieldValue | null | undefined): ContactFieldValue | undefined {
  if (!value) return undefined;
  switch (value.kind) {
    case 'TEXT':
    case 'EMAIL':
      return typeof value.text === 'string' && value.text !== '' ? textValue(value.text) : undefined;
    case 'NUMBER':
      return typeof value.number === 'number' && Number.isFinite(value.number) ? { number: value.number } : undefined;
    case 'DATE':
      return typeof value.date === 'string' && value.date !== '' ? { date: value.date } : undefined;
    case 'BOOLEAN':
      return typeof value.booleanValue === 'boolean' ? { boolean: value.booleanValue } : undefined;
    case 'SINGLE_OPTION':
      return typeof value.optionId === 'string' && value.optionId !== '' ? { optionId: value.optionId } : undefined;
    case 'MULTI_OPTION': {
      const ids = [...new Set(value.optionIds ?? [])].sort();
      return ids.length > 0 ? { optionIds: ids } : undefined;
    }
  }
}

/** An ingested order in its stored form (currency upper case, coupon folded). */
export function toContactOrder(order: {
  orderId: string;
  sourceId: string;
  orderedAt: Date | string;
  currency: string;
  amount: number;
  couponCode?: string | null;
  items: ContactOrderItem[];
}): ContactOrder {
  const coupon = order.couponCode == null ? null : foldCouponCode(order.couponCode);
  return {
    orderId: order.orderId,
    sourceId: order.sourceId,
    orderedAt: new Date(order.orderedAt),
    currency: order.currency.toUpperCase(),
    amount: order.amount,
    couponCode: coupon === '' ? null : coupon,
    items: order.items.map((i) => ({ productId: i.productId, variantId: i.variantId ?? null, groupId: i.groupId ?? null })),
  };
}
