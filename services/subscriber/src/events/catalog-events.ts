// Domain events of the field catalog, tags and topics. Removing a tag, field or topic also removes it
// from every subscriber of the account (and bumps their versions); for that a single account-wide
// event is emitted (tag.deleted, field.deleted, topic.deleted) rather than one event per affected
// subscriber: a projection applies it to every contact of the account it holds at that point of the
// stream. topic.created with enrolledExistingSubscribers: true likewise means "every contact of the
// account at this point, except those with an opt-out from it, is now subscribed".
import type { FieldDef, TagDef, TopicDef } from '../domain/types';
import type { DomainEvent } from './subscriber-events';

function event(type: string, accountId: string, now: string, body: Record<string, unknown>): DomainEvent {
  return { subject: `domain.${type}`, payload: { type, accountId, occurredAt: now, ...body } };
}

export const fieldEvent = (type: 'created' | 'updated' | 'archived' | 'restored' | 'deleted', accountId: string, field: FieldDef, now: string, extra: Record<string, unknown> = {}) =>
  event(`field.${type}`, accountId, now, { field: { ...field, options: field.options.map((o) => ({ ...o })) }, ...extra });

export const tagEvent = (type: 'created' | 'renamed' | 'deleted', accountId: string, tag: TagDef, now: string, extra: Record<string, unknown> = {}) =>
  event(`tag.${type}`, accountId, now, { tag: { id: tag.id, name: tag.name, createdAt: tag.createdAt }, ...extra });

export const topicEvent = (type: 'created' | 'updated' | 'deleted', accountId: string, topic: TopicDef, now: string, extra: Record<string, unknown> = {}) =>
  event(`topic.${type}`, accountId, now, { topic: { ...topic }, ...extra });
