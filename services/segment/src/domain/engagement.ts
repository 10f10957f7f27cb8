/**
 * Delivery and engagement facts of a contact (the Response operators read them), folded from the
 * messaging service's DOMAIN events:
 *   domain.email.delivered | domain.email.opened | domain.email.clicked
 * (defined in @mailer/nats/facts; events/facts.ts reads type, accountId, subscriberId, occurredAt).
 * Pure. Folding is idempotent (a redelivered event changes nothing) and keeps only three instants
 * per contact, not the history.
 */
import type { Contact } from './contact';

export const ENGAGEMENT_TYPES = ['email.delivered', 'email.opened', 'email.clicked'] as const;
export type EngagementType = (typeof ENGAGEMENT_TYPES)[number];

export interface EngagementEvent {
  type: EngagementType;
  accountId: string;
  subscriberId: string;
  occurredAt: Date;
}

export type EngagementFacts = Pick<Contact, 'lastDeliveredAt' | 'lastResponseAt' | 'firstUnansweredDeliveryAt'>;

const ms = (d: Date | null | undefined) => (d instanceof Date ? d.getTime() : undefined);
const later = (a: Date | null | undefined, b: Date) => (ms(a) !== undefined && ms(a)! >= b.getTime() ? a! : b);

/** The facts after one more event. */
export function foldEngagement(facts: EngagementFacts, e: EngagementEvent): Required<EngagementFacts> {
  const lastDeliveredAt = facts.lastDeliveredAt ?? null;
  const lastResponseAt = facts.lastResponseAt ?? null;
  const silence = facts.firstUnansweredDeliveryAt ?? null;
  const t = e.occurredAt;
  if (e.type === 'email.delivered') {
    // A delivery after the latest response starts (or is part of) the current silence.
    const unanswered = ms(lastResponseAt) === undefined || t.getTime() > ms(lastResponseAt)!;
    const firstUnansweredDeliveryAt = !unanswered ? silence : silence && ms(silence)! <= t.getTime() ? silence : t;
    return { lastDeliveredAt: later(lastDeliveredAt, t), lastResponseAt, firstUnansweredDeliveryAt };
  }
  // A response ends the silence of every delivery before it. Deliveries after it (their events
  // arrived first) keep a silence open; only the latest delivery is kept, so that one starts it
  // (a later start than the true first, when several arrived before an older response: rare, and
  // it errs towards "not silent long enough").
  const response = later(lastResponseAt, t);
  const stillSilent =
    silence && ms(silence)! > response.getTime() ? silence : lastDeliveredAt && ms(lastDeliveredAt)! > response.getTime() ? lastDeliveredAt : null;
  return { lastDeliveredAt, lastResponseAt: response, firstUnansweredDeliveryAt: stillSilent };
}
