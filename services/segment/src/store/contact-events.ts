/**
 * The DOMAIN events the contact projection applies, as it reads them: shape checks (a malformed event
 * is a MalformedEventError, terminated by the consumer) and the contact part a subscriber event carries.
 */
import { BUILT_IN_KEYS, ContactFieldValue, SubscriberFieldValue, textValue, toContactFieldValue } from '../domain/contact';
import { ENGAGEMENT_TYPES, type EngagementEvent } from '../domain/engagement';
import type { ProjectedContact, ProjectionCatalog } from './contact-schemas';

/** The subscriber as DOMAIN events carry it (subscriber service: contactJson). */
export interface SubscriberJson {
  id: string;
  email: string;
  firstName?: string | null;
  subscriberStatus: string;
  registeredAt: string;
  tags: string[];
  topicIds: string[];
  optOuts: Array<{ topicId: string; at: string }>;
  fields: Array<{ fieldId: string; value: SubscriberFieldValue }>;
}

export interface SubscriberEvent {
  type: string;
  accountId: string;
  occurredAt?: string;
  version: number;
  subscriber: SubscriberJson;
}

export interface CatalogEvent {
  type: 'tag.deleted' | 'topic.deleted' | 'field.deleted' | 'topic.created';
  accountId: string;
  tag?: { id: string };
  topic?: { id: string };
  field?: { id: string };
  enrolledExistingSubscribers?: boolean;
}

export class MalformedEventError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedEventError';
  }
}

const isStr = (v: unknown): v is string => typeof v === 'string' && v !== '';
const isStrArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
const isDate = (v: unknown) => typeof v === 'string' && !Number.isNaN(Date.parse(v));

/** Checks the shape of a subscriber event; throws MalformedEventError naming the first problem. */
export function parseSubscriberEvent(data: unknown): SubscriberEvent {
  const fail = (what: string): never => {
    throw new MalformedEventError(`malformed subscriber event: ${what}`);
  };
  if (typeof data !== 'object' || data === null) return fail('not an object');
  const e = data as Record<string, any>;
  if (!isStr(e.type) || !e.type.startsWith('subscriber.')) fail('type');
  if (!isStr(e.accountId)) fail('accountId');
  if (!Number.isSafeInteger(e.version) || e.version < 1) fail('version');
  const s = e.subscriber;
  if (typeof s !== 'object' || s === null) return fail('subscriber');
  if (!isStr(s.id)) fail('subscriber.id');
  if (!isStr(s.email)) fail('subscriber.email');
  if (s.firstName != null && typeof s.firstName !== 'string') fail('subscriber.firstName');
  if (!isStr(s.subscriberStatus)) fail('subscriber.subscriberStatus');
  if (!isDate(s.registeredAt)) fail('subscriber.registeredAt');
  if (!isStrArray(s.tags)) fail('subscriber.tags');
  if (!isStrArray(s.topicIds)) fail('subscriber.topicIds');
  if (!Array.isArray(s.optOuts) || !s.optOuts.every((o: any) => o && isStr(o.topicId) && isDate(o.at))) fail('subscriber.optOuts');
  if (!Array.isArray(s.fields) || !s.fields.every((f: any) => f && isStr(f.fieldId) && f.value && typeof f.value.kind === 'string')) fail('subscriber.fields');
  return e as SubscriberEvent;
}

/** Checks the shape of a delivery/engagement event (domain/engagement.ts); throws MalformedEventError. */
export function parseEngagementEvent(data: unknown): EngagementEvent {
  const fail = (what: string): never => {
    throw new MalformedEventError(`malformed engagement event: ${what}`);
  };
  if (typeof data !== 'object' || data === null) return fail('not an object');
  const e = data as Record<string, any>;
  if (!(ENGAGEMENT_TYPES as readonly string[]).includes(e.type)) fail('type');
  if (!isStr(e.accountId)) fail('accountId');
  if (!isStr(e.subscriberId)) fail('subscriberId');
  if (!isDate(e.occurredAt)) fail('occurredAt');
  return { type: e.type, accountId: e.accountId, subscriberId: e.subscriberId, occurredAt: new Date(e.occurredAt) };
}

export const CATALOG_TYPES = ['tag.deleted', 'topic.deleted', 'field.deleted', 'topic.created'] as const;

export function parseCatalogEvent(data: unknown): CatalogEvent {
  const fail = (what: string): never => {
    throw new MalformedEventError(`malformed catalog event: ${what}`);
  };
  if (typeof data !== 'object' || data === null) return fail('not an object');
  const e = data as Record<string, any>;
  if (!(CATALOG_TYPES as readonly string[]).includes(e.type)) fail('type');
  if (!isStr(e.accountId)) fail('accountId');
  const key = e.type.split('.')[0] as 'tag' | 'topic' | 'field';
  if (!e[key] || !isStr(e[key].id)) fail(`${key}.id`);
  return e as CatalogEvent;
}

/** The subscriber-owned part of a contact, from an event (catalog deletions already known stripped). */
export function subscriberPart(e: SubscriberEvent, catalog?: ProjectionCatalog | null): Omit<ProjectedContact, 'orders' | 'lastDeliveredAt' | 'lastResponseAt' | 'firstUnansweredDeliveryAt' | 'seq'> {
  const s = e.subscriber;
  const deletedTags = new Set(catalog?.deletedTags ?? []);
  const deletedTopics = new Set(catalog?.deletedTopics ?? []);
  const deletedFields = new Set(catalog?.deletedFields ?? []);
  const email = s.email.toLowerCase();
  const firstName = typeof s.firstName === 'string' && s.firstName !== '' ? s.firstName : null;
  const fields: Record<string, ContactFieldValue> = { [BUILT_IN_KEYS.EMAIL]: textValue(email) };
  if (firstName !== null) fields[BUILT_IN_KEYS.FIRST_NAME] = textValue(firstName);
  for (const f of s.fields) {
    if (deletedFields.has(f.fieldId)) continue;
    const v = toContactFieldValue(f.value);
    if (v) fields[f.fieldId] = v;
  }
  return {
    _id: s.id,
    accountId: e.accountId,
    email,
    firstName,
    subscriberStatus: s.subscriberStatus,
    registeredAt: new Date(s.registeredAt),
    tags: [...new Set(s.tags.filter((t) => !deletedTags.has(t)))].sort(),
    topics: [...new Set(s.topicIds.filter((t) => !deletedTopics.has(t)))].sort(),
    optOuts: s.optOuts.filter((o) => !deletedTopics.has(o.topicId)).map((o) => ({ topicId: o.topicId, at: new Date(o.at) })),
    fields,
    version: e.version,
  };
}
