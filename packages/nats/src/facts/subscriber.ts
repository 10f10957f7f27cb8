// Facts of the subscriber service's subscribers (subjects domain.subscriber.*). Every one carries the
// whole contact and the subscriber's `version`, so a consumer rebuilds it without calling back and
// drops a fact whose version is not above the one it applied (see the subscriber service's
// events/subscriber-events.ts for which facts one change emits).
import { z } from 'zod';
import { envelope, id, instant } from './schema';

export const SUBSCRIBER_STATUSES = ['UNCONFIRMED', 'ACTIVE', 'UNSUBSCRIBED', 'BOUNCED', 'COMPLAINED', 'BLOCKED'] as const;

/** A typed field value in the API's FieldValue shape (kind + the one member of that kind). */
export const fieldValue = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('TEXT'), text: z.string() }),
  z.object({ kind: z.literal('EMAIL'), text: z.string() }),
  z.object({ kind: z.literal('NUMBER'), number: z.number() }),
  z.object({ kind: z.literal('DATE'), date: z.string() }),
  z.object({ kind: z.literal('BOOLEAN'), booleanValue: z.boolean() }),
  z.object({ kind: z.literal('SINGLE_OPTION'), optionId: z.string(), labels: z.array(z.string()) }),
  z.object({ kind: z.literal('MULTI_OPTION'), optionIds: z.array(z.string()), labels: z.array(z.string()) }),
]);
export type FieldValueJson = z.infer<typeof fieldValue>;

export const optOut = z.object({ topicId: id, at: instant, source: z.string() });
export const fieldEntry = z.object({ fieldId: id, personalizationTagName: z.string(), value: fieldValue });

/** The contact as subscriber facts carry it. */
export const contact = z.object({
  id,
  email: id,
  firstName: z.string().nullable(),
  subscriberStatus: z.enum(SUBSCRIBER_STATUSES),
  registeredAt: instant,
  tags: z.array(z.string()),
  topicIds: z.array(z.string()),
  optOuts: z.array(optOut),
  fields: z.array(fieldEntry),
});
export type ContactJson = z.infer<typeof contact>;

const subscriberFact = <T extends string, M extends z.ZodRawShape>(type: T, members: M) =>
  z.object({ ...envelope(type), version: z.number().int().min(1), subscriber: contact, ...members });

/** Which parts of the subscriber a subscriber.updated changed. */
export const SUBSCRIBER_PARTS = ['email', 'firstName', 'status', 'tags', 'topics', 'optOuts', 'fields'] as const;

export const subscriberFacts = {
  'subscriber.created': subscriberFact('subscriber.created', {}),
  /** The state before deletion, version + 1. */
  'subscriber.deleted': subscriberFact('subscriber.deleted', {}),
  'subscriber.updated': subscriberFact('subscriber.updated', { changes: z.array(z.enum(SUBSCRIBER_PARTS)) }),
  'subscriber.confirmed': subscriberFact('subscriber.confirmed', { previousStatus: z.enum(SUBSCRIBER_STATUSES) }),
  'subscriber.unsubscribed': subscriberFact('subscriber.unsubscribed', { previousStatus: z.enum(SUBSCRIBER_STATUSES) }),
  'subscriber.tag_added': subscriberFact('subscriber.tag_added', { tagId: id }),
  'subscriber.tag_removed': subscriberFact('subscriber.tag_removed', { tagId: id }),
  'subscriber.topics_changed': subscriberFact('subscriber.topics_changed', { added: z.array(id), removed: z.array(id) }),
  'subscriber.topic_opted_out': subscriberFact('subscriber.topic_opted_out', { topicId: id, at: instant, source: z.string() }),
  'subscriber.field_values_changed': subscriberFact('subscriber.field_values_changed', { fieldIds: z.array(id) }),
};
