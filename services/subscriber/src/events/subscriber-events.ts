// Domain events of subscribers, built with the shared fact definitions (@mailer/nats/facts, where the
// payloads are defined). Every event carries the whole contact (so a consumer such as the segment
// service's projection or the webhook service can rebuild it without calling back) and the
// subscriber's `version`, which grows with every change: a projection keeps the highest version it
// applied and drops events with a version not above it.
//
// One change of a subscriber emits, all with the same version and state:
// - subscriber.created (a new subscriber: no tag_added / topics_changed for its initial tags/topics),
// - subscriber.deleted (the state before deletion, version + 1),
// - otherwise subscriber.updated with `changes` (email, firstName, status, tags, topics, optOuts,
//   fields) plus the facts that apply: subscriber.confirmed (UNCONFIRMED -> ACTIVE),
//   subscriber.unsubscribed (status became UNSUBSCRIBED), subscriber.tag_added / tag_removed (one per
//   tag), subscriber.topics_changed ({added, removed}), subscriber.topic_opted_out (one per new
//   opt-out), subscriber.field_values_changed ({fieldIds}).
import { domainFact, type ContactJson, type DomainMessage, type Fact, type FactType, type FieldValueJson } from '@mailer/nats/facts';
import type { AccountDefinitions, SubscriberDiff } from '../domain/contacts';
import type { Catalog } from '../domain/fields';
import type { StoredValue, SubscriberState, ValueKind } from '../domain/types';
import { typedValue } from '../domain/values';

/** A fact with its subject, as the outbox records it. */
export type DomainEvent = DomainMessage;

/** A field value in the API's response shape: {kind, text|number|date|booleanValue|optionId|optionIds, labels?}. */
export function valueJson(kind: ValueKind, value: StoredValue, labels?: string[]): FieldValueJson {
  switch (kind) {
    case 'TEXT':
    case 'EMAIL':
      return { kind, text: value as string };
    case 'NUMBER':
      return { kind, number: value as number };
    case 'DATE':
      return { kind, date: value as string };
    case 'BOOLEAN':
      return { kind, booleanValue: value as boolean };
    case 'SINGLE_OPTION':
      return { kind, optionId: value as string, labels: labels ?? [] };
    case 'MULTI_OPTION':
      return { kind, optionIds: value as string[], labels: labels ?? [] };
  }
}

/** The contact as events carry it. */
export function contactJson(s: SubscriberState, catalog: Catalog): ContactJson {
  const fields = Object.keys(s.fields)
    .sort()
    .flatMap((fieldId) => {
      const field = catalog.byId.get(fieldId);
      if (!field) return [];
      const t = typedValue(field, s.fields[fieldId], catalog);
      return [{ fieldId, personalizationTagName: field.personalizationTagName, value: valueJson(t.kind, t.value, t.labels) }];
    });
  return {
    id: s.id,
    email: s.email,
    firstName: s.firstName,
    subscriberStatus: s.status,
    registeredAt: s.registeredAt,
    tags: s.tags,
    topicIds: s.topicIds,
    optOuts: s.optOuts.map((o) => ({ topicId: o.topicId, at: o.at, source: o.source })),
    fields,
  };
}

type SubscriberFactType = Extract<FactType, `subscriber.${string}`>;
/** The members a subscriber fact of type T has beyond the envelope, version and contact. */
type Extra<T extends SubscriberFactType> = Omit<Fact<T>, 'type' | 'accountId' | 'occurredAt' | 'version' | 'subscriber'>;

function event<T extends SubscriberFactType>(type: T, accountId: string, s: SubscriberState, version: number, defs: Pick<AccountDefinitions, 'catalog'>, now: string, extra: Extra<T>): DomainEvent {
  return domainFact({ type, accountId, occurredAt: now, version, subscriber: contactJson(s, defs.catalog), ...extra } as Fact<T>);
}

export function createdEvent(accountId: string, s: SubscriberState, defs: Pick<AccountDefinitions, 'catalog'>, now: string): DomainEvent {
  return event('subscriber.created', accountId, s, s.version, defs, now, {});
}

export function deletedEvent(accountId: string, s: SubscriberState, defs: Pick<AccountDefinitions, 'catalog'>, now: string): DomainEvent {
  return event('subscriber.deleted', accountId, s, s.version + 1, defs, now, {});
}

/** The events of one change of an existing subscriber (none when nothing changed). */
export function changeEvents(accountId: string, before: SubscriberState, after: SubscriberState, diff: SubscriberDiff, defs: Pick<AccountDefinitions, 'catalog'>, now: string): DomainEvent[] {
  if (!diff.changed) return [];
  const v = after.version;
  const out = [event('subscriber.updated', accountId, after, v, defs, now, { changes: diff.parts as Extra<'subscriber.updated'>['changes'] })];
  if (before.status !== after.status) {
    if (before.status === 'UNCONFIRMED' && after.status === 'ACTIVE') out.push(event('subscriber.confirmed', accountId, after, v, defs, now, { previousStatus: before.status }));
    if (after.status === 'UNSUBSCRIBED') out.push(event('subscriber.unsubscribed', accountId, after, v, defs, now, { previousStatus: before.status }));
  }
  for (const tagId of diff.tagsAdded) out.push(event('subscriber.tag_added', accountId, after, v, defs, now, { tagId }));
  for (const tagId of diff.tagsRemoved) out.push(event('subscriber.tag_removed', accountId, after, v, defs, now, { tagId }));
  if (diff.topicsAdded.length || diff.topicsRemoved.length) {
    out.push(event('subscriber.topics_changed', accountId, after, v, defs, now, { added: diff.topicsAdded, removed: diff.topicsRemoved }));
  }
  const hadOptOut = new Set(before.optOuts.map((o) => o.topicId));
  for (const o of after.optOuts) {
    if (!hadOptOut.has(o.topicId)) out.push(event('subscriber.topic_opted_out', accountId, after, v, defs, now, { topicId: o.topicId, at: o.at, source: o.source }));
  }
  if (diff.fieldIds.length) out.push(event('subscriber.field_values_changed', accountId, after, v, defs, now, { fieldIds: diff.fieldIds }));
  return out;
}
