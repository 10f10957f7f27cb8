import { invalid } from '@mailer/kit';
import { LIMITS } from './limits';

/** SubscriberStatus values (the API contract). */
export const SUBSCRIBER_STATUSES = ['UNCONFIRMED', 'ACTIVE', 'UNSUBSCRIBED', 'BOUNCED', 'COMPLAINED', 'BLOCKED'] as const;
export type SubscriberStatus = (typeof SUBSCRIBER_STATUSES)[number];

/** Statuses a customer may set by hand; the others are reached by events (bounce, complaint). */
export const MANUAL_STATUSES: readonly SubscriberStatus[] = ['ACTIVE', 'UNSUBSCRIBED', 'BLOCKED'];

/** A new subscriber may also start UNCONFIRMED (double opt-in pending). */
export function statusForNewSubscriber(requested: SubscriberStatus | undefined): SubscriberStatus {
  const status = requested ?? 'ACTIVE';
  if (status !== 'UNCONFIRMED' && !MANUAL_STATUSES.includes(status)) {
    throw invalid('subscriber_status_not_manual', `status ${status} cannot be set by hand; use ${[...MANUAL_STATUSES, 'UNCONFIRMED'].join(', ')}`);
  }
  return status;
}

/** A status set on an existing subscriber (replacement, sync update): manual statuses only. */
export function manualStatus(requested: SubscriberStatus | undefined, path = 'subscriberStatus'): SubscriberStatus {
  if (requested === undefined) throw invalid('validation_failed', `${path} is required`, [{ path, problem: 'required' }]);
  if (!MANUAL_STATUSES.includes(requested)) {
    throw invalid('subscriber_status_not_manual', `status ${requested} cannot be set by hand; use ${MANUAL_STATUSES.join(', ')}`);
  }
  return requested;
}

export const MAX_FIRST_NAME_LENGTH = LIMITS.firstName;

/** First names are kept as given (trimmed); empty means none. */
export function normalizeFirstName(raw: string | null | undefined): string | null {
  if (raw === undefined || raw === null) return null;
  const name = raw.trim();
  if (name.length > MAX_FIRST_NAME_LENGTH) {
    throw invalid('validation_failed', `firstName is longer than ${MAX_FIRST_NAME_LENGTH} characters`, [
      { path: 'firstName', problem: `longer than ${MAX_FIRST_NAME_LENGTH} characters` },
    ]);
  }
  return name.length ? name : null;
}



/** A send's audience page (ListAudience): 1..1000 subscribers, 0 meaning 500. */
export function audiencePageSize(pageSize: number): number {
  const size = pageSize || 500;
  if (!Number.isSafeInteger(size) || size < 1 || size > LIMITS.pageSize) {
    throw invalid('validation_failed', `pageSize must be 1..${LIMITS.pageSize} (0: 500)`, [{ path: 'pageSize', problem: `not 0..${LIMITS.pageSize}` }]);
  }
  return size;
}

/**
 * Whether the subscriber receives a send to the account's ACTIVE audience (of a topic): ACTIVE, and
 * subscribed to the topic, never opted out of it. The subscriber store's answer, which is authoritative
 * over the segment projection's (that one may lag behind a status change).
 */
export function inAudience(s: AudienceView, topicId?: string): boolean {
  return audienceExclusion(s, topicId) === null;
}

type AudienceView = { status: SubscriberStatus; topicIds: readonly string[]; optOuts: ReadonlyArray<{ topicId: string }> };

/** Why a reader is left out of a send by the rules this store decides (the segment's are the segment service's). */
export type StoreExclusion = 'NOT_ACTIVE' | 'OPTED_OUT' | 'NOT_IN_TOPIC';

/**
 * The first audience rule a subscriber fails, or null: the status, then the topic. An opted-out
 * reader is OPTED_OUT rather than NOT_IN_TOPIC (opting out took the topic away, and that is why).
 */
export function audienceExclusion(s: AudienceView, topicId?: string): StoreExclusion | null {
  if (s.status !== 'ACTIVE') return 'NOT_ACTIVE';
  if (topicId === undefined) return null;
  if (s.optOuts.some((o) => o.topicId === topicId)) return 'OPTED_OUT';
  return s.topicIds.includes(topicId) ? null : 'NOT_IN_TOPIC';
}

/** A prefix search on the canonical email or the lowercased first name, as a safe anchored regex. */
export function prefixPattern(search: string): string {
  if (search.length > LIMITS.search) {
    throw invalid('validation_failed', `search is longer than ${LIMITS.search} characters`, [{ path: 'search', problem: `longer than ${LIMITS.search} characters` }]);
  }
  return `^${search.trim().toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`;
}

/** Statuses only delivery outcomes set (the messaging service's bounce and complaint effects). */
export const DELIVERY_STATUSES: readonly SubscriberStatus[] = ['BOUNCED', 'COMPLAINED'];

/**
 * The status after a reported delivery outcome. A customer's BLOCKED stays (their decision outranks
 * a mail server's), and a complaint is not downgraded by a later bounce (it is the stronger signal:
 * the reader asked not to be mailed).
 */
export function statusAfterDelivery(current: SubscriberStatus, reported: SubscriberStatus): SubscriberStatus {
  if (!DELIVERY_STATUSES.includes(reported)) {
    throw invalid('validation_failed', `status ${reported} is not a delivery outcome; use ${DELIVERY_STATUSES.join(' or ')}`, [{ path: 'subscriberStatus', problem: 'not a delivery outcome' }]);
  }
  if (current === 'BLOCKED') return current;
  if (current === 'COMPLAINED' && reported === 'BOUNCED') return current;
  return reported;
}
