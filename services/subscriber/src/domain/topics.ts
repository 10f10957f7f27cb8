// Topics of an account and of one subscriber: validation, default topic, replacement, opt-outs (pure).
import { failedPrecondition, invalid, notFound } from '@mailer/kit';
import { parseIdList } from './ids';
import { LIMITS } from './limits';
import type { OptOut, TopicDef } from './types';

export const DEFAULT_OPT_OUT_SOURCE = 'api';

/** Label of the default topic every account has from its first use on (the API contract). */
export const DEFAULT_TOPIC_LABEL = 'Newsletter';

export function validateTopicLabel(raw: string, path = 'label'): string {
  const label = (raw ?? '').trim();
  if (label.length === 0 || label.length > LIMITS.topicLabel) {
    throw invalid('validation_failed', `${path} must be 1..${LIMITS.topicLabel} characters`, [{ path, problem: `must be 1..${LIMITS.topicLabel} characters` }]);
  }
  return label;
}

/** Descriptions are optional; blank means none. */
export function validateTopicDescription(raw: string | null | undefined, path = 'description'): string | null {
  if (raw === undefined || raw === null) return null;
  const text = raw.trim();
  if (text.length > LIMITS.topicDescription) {
    throw invalid('validation_failed', `${path} is longer than ${LIMITS.topicDescription} characters`, [{ path, problem: `longer than ${LIMITS.topicDescription} characters` }]);
  }
  return text.length ? text : null;
}

export function validateOptOutSource(raw: string | undefined): string {
  if (raw === undefined) return DEFAULT_OPT_OUT_SOURCE;
  const source = raw.trim();
  if (source.length === 0 || source.length > LIMITS.optOutSource) {
    throw invalid('validation_failed', `source must be 1..${LIMITS.optOutSource} characters`, [{ path: 'source', problem: `must be 1..${LIMITS.optOutSource} characters` }]);
  }
  return source;
}

/** Topic ids a subscriber is to join: UUIDs, no duplicates, existing (topic_not_found) and active (topic_inactive). */
export function validateTopicRefs(raw: readonly string[], topics: ReadonlyMap<string, TopicDef>, path = 'topicIds'): string[] {
  const ids = parseIdList(raw, path, LIMITS.topicsPerRequest);
  for (const id of ids) if (!topics.has(id)) throw notFound('topic_not_found', `topic ${id} does not exist`);
  return ids.map((id, i) => {
    const topic = topics.get(id)!;
    if (!topic.active) throw invalid('topic_inactive', `topic ${id} is not active; subscribers cannot join it`, [{ path: `${path}[${i}]`, problem: 'topic is not active' }]);
    return topic.id; // the account's own string, shared by every subscriber
  });
}

/** Topics a new subscriber joins: the given ones, or when none were given the account's default topic. */
export function initialTopics(given: readonly string[] | undefined, topics: ReadonlyMap<string, TopicDef>): string[] {
  if (given !== undefined) return validateTopicRefs(given, topics).sort();
  for (const t of topics.values()) if (t.isDefault && t.active) return [t.id];
  return [];
}

export interface TopicMembership {
  topicIds: string[];
  optOuts: OptOut[];
}

/**
 * ReplaceSubscriberTopics: the listed topics (validated active) become the subscriptions; topics left
 * out are unsubscribed without recording an opt-out. A listed topic the subscriber personally opted
 * out of stays opted out and unsubscribed, unless `overrideOptOuts`: then the opt-out is removed and
 * the topic subscribed.
 */
export function replaceTopics(current: TopicMembership, requested: readonly string[], override: boolean): TopicMembership {
  const optedOut = new Set(current.optOuts.map((o) => o.topicId));
  const wanted = new Set(requested);
  const topicIds = [...wanted].filter((id) => override || !optedOut.has(id)).sort();
  const optOuts = override ? current.optOuts.filter((o) => !wanted.has(o.topicId)) : current.optOuts;
  return { topicIds, optOuts };
}

/** Joining topics without replacing (sync rows): personal opt-outs are respected, never overridden. */
export function joinTopics(current: TopicMembership, join: readonly string[]): TopicMembership {
  const optedOut = new Set(current.optOuts.map((o) => o.topicId));
  const ids = new Set(current.topicIds);
  for (const id of join) if (!optedOut.has(id)) ids.add(id);
  return { topicIds: [...ids].sort(), optOuts: current.optOuts };
}

/** An explicit opt-out: unsubscribed and recorded with time and source. A repeated opt-out keeps the first record. */
export function optOutOfTopic(current: TopicMembership, topicId: string, at: string, source: string): TopicMembership {
  const topicIds = current.topicIds.filter((id) => id !== topicId);
  if (current.optOuts.some((o) => o.topicId === topicId)) return { topicIds, optOuts: current.optOuts };
  const optOuts = [...current.optOuts, { topicId, at, source }].sort((a, b) => (a.topicId < b.topicId ? -1 : a.topicId > b.topicId ? 1 : 0));
  return { topicIds, optOuts };
}

export interface SubscriberTopicView {
  topicId: string;
  label: string;
  subscribed: boolean;
  optedOut: boolean;
  optedOutAt?: string;
  optOutSource?: string;
}

/** Every topic of the account (creation order) with this subscriber's subscription and opt-out. */
export function subscriberTopicsView(topics: readonly TopicDef[], membership: TopicMembership): SubscriberTopicView[] {
  const subscribed = new Set(membership.topicIds);
  const optOuts = new Map(membership.optOuts.map((o) => [o.topicId, o]));
  return topics.map((t) => {
    const o = optOuts.get(t.id);
    return { topicId: t.id, label: t.label, subscribed: subscribed.has(t.id), optedOut: o !== undefined, ...(o ? { optedOutAt: o.at, optOutSource: o.source } : {}) };
  });
}

/**
 * UpdateTopic rules on the default topic: every account has exactly one default at all times. The
 * default can be moved (isDefault: true elsewhere) but not dropped, deactivated or deleted; an
 * inactive topic cannot become the default.
 */
export function checkTopicUpdate(topic: TopicDef, change: { active?: boolean; isDefault?: boolean }): void {
  const active = change.active ?? topic.active;
  const isDefault = change.isDefault === true || (topic.isDefault && change.isDefault !== false);
  if (topic.isDefault && change.isDefault === false) {
    throw failedPrecondition('topic_is_default', `topic ${topic.id} is the default topic; make another topic the default first`);
  }
  if (isDefault && !active) {
    if (topic.isDefault) throw failedPrecondition('topic_is_default', `topic ${topic.id} is the default topic and cannot be deactivated; make another topic the default first`);
    throw invalid('topic_inactive', `topic ${topic.id} is not active and cannot become the default`, [{ path: 'isDefault', problem: 'topic is not active' }]);
  }
}

/** The default topic is never deleted: the account would be left without one. */
export function checkTopicDelete(topic: TopicDef): void {
  if (topic.isDefault) {
    throw failedPrecondition('topic_is_default', `topic ${topic.id} is the default topic; make another topic the default before deleting it`);
  }
}
