/**
 * The subscriber-owned part of a contact, from a subscriber fact. The facts themselves are parsed with
 * the shared definitions (events/facts.ts); a malformed one is a MalformedEventError, terminated by the consumer.
 */
import { BUILT_IN_KEYS, ContactFieldValue, textValue, toContactFieldValue } from '../domain/contact';
import type { SubscriberEvent } from '../events/facts';
import type { ProjectedContact, ProjectionCatalog } from './contact-schemas';

/** Catalog deletions already known are stripped. */
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
