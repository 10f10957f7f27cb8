// Domain events of subscribers. Every event carries the whole contact (so a consumer such as the
// segment service's projection or the webhook service can rebuild it without calling back) and the
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
import type { AccountContext, SubscriberDiff } from '../domain/contacts';
import type { Catalog } from '../domain/fields';
import type { StoredValue, SubscriberState } from '../domain/types';
import { typedValue } from '../domain/values';

export interface DomainEvent {
  subject: string;
  payload: Record<string, unknown>;
}

/** A field value in the API's response shape: {kind, text|number|date|booleanValue|optionId|optionIds, labels?}. */
export function valueJson(kind: string, value: StoredValue, labels?: string[]): Record<string, unknown> {
  switch (kind) {
    case 'TEXT':
    case 'EMAIL':
      return { kind, text: value };
    case 'NUMBER':
      return { kind, number: value };
    case 'DATE':
      return { kind, date: value };
    case 'BOOLEAN':
      return { kind, booleanValue: value };
    case 'SINGLE_OPTION':
      return { kind, optionId: value, labels: labels ?? [] };
    default:
      return { kind, optionIds: value, labels: labels ?? [] };
  }
}

/** The contact as events carry it. */
export function contactJson(s: SubscriberState, catalog: Catalog) {
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

function event(type: string, accountId: string, s: SubscriberState, version: number, ctx: Pick<AccountContext, 'catalog'>, now: string, extra: Record<string, unknown> = {}): DomainEvent {
  return {
    subject: `domain.${type}`,
    payload: { type, accountId, occurredAt: now, version, subscriber: contactJson(s, ctx.catalog), ...extra },
  };
}

export function createdEvent(accountId: string, s: SubscriberState, ctx: Pick<AccountContext, 'catalog'>, now: string): DomainEvent {
  return event('subscriber.created', accountId, s, s.version, ctx, now);
}

export function deletedEvent(accountId: string, s: SubscriberState, ctx: Pick<AccountContext, 'catalog'>, now: string): DomainEvent {
  return event('subscriber.deleted', accountId, s, s.version + 1, ctx, now);
}

/** The events of one change of an existing subscriber (none when nothing changed). */
export function changeEvents(accountId: string, before: SubscriberState, after: SubscriberState, diff: SubscriberDiff, ctx: Pick<AccountContext, 'catalog'>, now: string): DomainEvent[] {
  if (!diff.changed) return [];
  const v = after.version;
  const out = [event('subscriber.updated', accountId, after, v, ctx, now, { changes: diff.parts })];
  if (before.status !== after.status) {
    if (before.status === 'UNCONFIRMED' && after.status === 'ACTIVE') out.push(event('subscriber.confirmed', accountId, after, v, ctx, now, { previousStatus: before.status }));
    if (after.status === 'UNSUBSCRIBED') out.push(event('subscriber.unsubscribed', accountId, after, v, ctx, now, { previousStatus: before.status }));
  }
  for (const tagId of diff.tagsAdded) out.push(event('subscriber.tag_added', accountId, after, v, ctx, now, { tagId }));
  for (const tagId of diff.tagsRemoved) out.push(event('subscriber.tag_removed', accountId, after, v, ctx, now, { tagId }));
  if (diff.topicsAdded.length || diff.topicsRemoved.length) {
    out.push(event('subscriber.topics_changed', accountId, after, v, ctx, now, { added: diff.topicsAdded, removed: diff.topicsRemoved }));
  }
  const hadOptOut = new Set(before.optOuts.map((o) => o.topicId));
  for (const o of after.optOuts) {
    if (!hadOptOut.has(o.topicId)) out.push(event('subscriber.topic_opted_out', accountId, after, v, ctx, now, { topicId: o.topicId, at: o.at, source: o.source }));
  }
  if (diff.fieldIds.length) out.push(event('subscriber.field_values_changed', accountId, after, v, ctx, now, { fieldIds: diff.fieldIds }));
  return out;
}
