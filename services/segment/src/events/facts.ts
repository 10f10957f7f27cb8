/**
 * The DOMAIN facts the contact projection reads, parsed with the shared definitions
 * (@mailer/nats/facts). The projection is a tolerant reader: it requires, with their shared types,
 * exactly the members it uses (picked from each fact's definition), so a fact replayed from the
 * start of the stream applies as long as those are right, and a producer changing one of them breaks
 * the contract test (test/facts-contract.test.ts), not the projection at run time.
 */
import { z } from 'zod';
import { contact, DOMAIN_FACTS, FACT_TYPES, fieldEntry, isFactType, MalformedFactError, optOut, parseWith, type FactType } from '@mailer/nats/facts';
import { ENGAGEMENT_TYPES, type EngagementEvent } from '../domain/engagement';

/** Thrown for a fact of a handled type that does not parse (the consumer terminates it). */
export { MalformedFactError as MalformedEventError };

const projectedContact = contact.extend({ optOuts: z.array(optOut.pick({ topicId: true, at: true })), fields: z.array(fieldEntry.pick({ fieldId: true, value: true })) });

type SubscriberFactType = Extract<FactType, `subscriber.${string}`>;
const SUBSCRIBER_FACT_TYPES = FACT_TYPES.filter((t): t is SubscriberFactType => t.startsWith('subscriber.'));
// Every subscriber fact has the same members besides its own extras: read them from one definition.
const subscriberView = DOMAIN_FACTS['subscriber.created']
  .pick({ accountId: true, version: true })
  .extend({ type: z.enum(SUBSCRIBER_FACT_TYPES as [SubscriberFactType, ...SubscriberFactType[]]), subscriber: projectedContact });

/** A subscriber fact as the projection reads it (the whole contact and its version). */
export type SubscriberEvent = z.infer<typeof subscriberView>;

/** Parses any subscriber.* fact; throws MalformedEventError. */
export function parseSubscriberEvent(data: unknown): SubscriberEvent {
  const type = (data as { type?: unknown } | null)?.type;
  if (!isFactType(type) || !type.startsWith('subscriber.')) throw new MalformedFactError('subscriber fact', `type: ${JSON.stringify(type ?? null)} is not a known subscriber fact`);
  return parseWith(subscriberView, data, `${type} fact`);
}

export const CATALOG_TYPES = ['tag.deleted', 'topic.deleted', 'field.deleted', 'topic.created'] as const;
type CatalogType = (typeof CATALOG_TYPES)[number];

const idOnly = z.object({ id: DOMAIN_FACTS['tag.created'].shape.tag.shape.id });
const catalogViews = {
  'tag.deleted': DOMAIN_FACTS['tag.deleted'].pick({ type: true, accountId: true }).extend({ tag: idOnly }),
  'topic.deleted': DOMAIN_FACTS['topic.deleted'].pick({ type: true, accountId: true }).extend({ topic: idOnly }),
  'field.deleted': DOMAIN_FACTS['field.deleted'].pick({ type: true, accountId: true }).extend({ field: idOnly }),
  'topic.created': DOMAIN_FACTS['topic.created'].pick({ type: true, accountId: true, enrolledExistingSubscribers: true }).extend({ topic: idOnly }),
};
/** An account-wide catalog fact the projection applies (its id, and for topic.created the enrollment). */
export type CatalogEvent = { [T in CatalogType]: z.infer<(typeof catalogViews)[T]> }[CatalogType];

export function parseCatalogEvent(data: unknown): CatalogEvent {
  const type = (data as { type?: unknown } | null)?.type as CatalogType;
  const view = catalogViews[type];
  if (!view) throw new MalformedFactError('catalog fact', `type: ${JSON.stringify(type ?? null)} is not a catalog fact the projection applies`);
  return parseWith(view, data, `${type} fact`) as CatalogEvent;
}

// The three facts share these members: read them from one definition.
const engagementView = DOMAIN_FACTS['email.delivered'].pick({ accountId: true, subscriberId: true, occurredAt: true }).extend({ type: z.enum(ENGAGEMENT_TYPES) });

/**
 * Parses email.delivered / opened / clicked into the domain's EngagementEvent; null for a mail to an
 * address that is no subscriber (subscriberId null: nothing to project). Throws MalformedEventError.
 */
export function parseEngagementEvent(data: unknown): EngagementEvent | null {
  const type = (data as { type?: unknown } | null)?.type as (typeof ENGAGEMENT_TYPES)[number];
  if (!(ENGAGEMENT_TYPES as readonly string[]).includes(type)) throw new MalformedFactError('engagement fact', `type: ${JSON.stringify(type ?? null)} is not an engagement fact`);
  const e = parseWith(engagementView, data, `${type} fact`);
  return e.subscriberId === null ? null : { type: e.type, accountId: e.accountId, subscriberId: e.subscriberId, occurredAt: new Date(e.occurredAt) };
}
