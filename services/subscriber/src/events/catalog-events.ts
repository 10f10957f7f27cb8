// Domain events of the field catalog, tags and topics, built with the shared fact definitions
// (@mailer/nats/facts). Removing a tag, field or topic also removes it from every subscriber of the
// account (and bumps their versions); for that a single account-wide event is emitted (tag.deleted,
// field.deleted, topic.deleted) rather than one event per affected subscriber: a projection applies
// it to every contact of the account it holds at that point of the stream. topic.created with
// enrolledExistingSubscribers: true likewise means "every contact of the account at this point,
// except those with an opt-out from it, is now subscribed".
import { domainFact, type Fact, type FactType } from '@mailer/nats/facts';
import type { FieldDef, TagDef, TopicDef } from '../domain/types';
import type { DomainEvent } from './subscriber-events';

/** The members a fact of type T has beyond the envelope and the field/tag/topic it is about. */
type Extra<T extends FactType> = Omit<Fact<T>, 'type' | 'accountId' | 'occurredAt' | 'field' | 'tag' | 'topic'>;

function event<T extends FactType>(type: T, accountId: string, now: string, body: object): DomainEvent {
  return domainFact({ type, accountId, occurredAt: now, ...body } as Fact<T>);
}

export const fieldEvent = <K extends 'created' | 'updated' | 'archived' | 'restored' | 'deleted'>(type: K, accountId: string, field: FieldDef, now: string, ...extra: Extra<`field.${K}`> extends Record<string, never> ? [] : [Extra<`field.${K}`>]) =>
  event(`field.${type}`, accountId, now, { field: { ...field, options: field.options.map((o) => ({ ...o })) }, ...extra[0] });

export const tagEvent = <K extends 'created' | 'renamed' | 'deleted'>(type: K, accountId: string, tag: TagDef, now: string, ...extra: Extra<`tag.${K}`> extends Record<string, never> ? [] : [Extra<`tag.${K}`>]) =>
  event(`tag.${type}`, accountId, now, { tag: { id: tag.id, name: tag.name, createdAt: tag.createdAt }, ...extra[0] });

export const topicEvent = <K extends 'created' | 'updated' | 'deleted'>(type: K, accountId: string, topic: TopicDef, now: string, ...extra: Extra<`topic.${K}`> extends Record<string, never> ? [] : [Extra<`topic.${K}`>]) =>
  event(`topic.${type}`, accountId, now, { topic: { ...topic }, ...extra[0] });
