// The bounce policy of the API contract ("Delivery facts, tracking, bounces, suppressions, unsubscribe") as
// pure functions: given a parsed report and what the store knows, the effects to apply. No I/O.
//
// The effects always target the message's recorded recipient, never an address named in the
// report: the report is only trusted for the outcome (the VERP address proved which message it
// is about), so a crafted report cannot suppress or unsubscribe arbitrary addresses.
import type { BounceReport } from './bounce-report';

export const SOFT_BOUNCE_THRESHOLD = 3;
export const SOFT_BOUNCE_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

export type SuppressionReason = 'HARD_BOUNCE' | 'SOFT_BOUNCES' | 'COMPLAINT';

export type BounceEffect =
  | { type: 'messageStatus'; messageId: string; status: 'BOUNCED' | 'DELIVERED'; reason: string | null }
  | { type: 'recordSoftBounce'; email: string; messageId: string; at: Date }
  | { type: 'suppress'; email: string; reason: SuppressionReason }
  | { type: 'subscriberStatus'; email: string; status: 'BOUNCED' | 'COMPLAINED' }
  | { type: 'unsubscribeTopic'; email: string; topicId: string };

/** What the store knows about the message the VERP address named. */
export interface BouncedMessage {
  messageId: string;
  recipient: string;
  topicId: string | null;
}

export interface BounceHistory {
  /** When earlier soft bounces of this recipient were recorded (any order, any age). */
  softBounceTimes: Date[];
  now: Date;
}

/** True when this soft bounce is the threshold-th within the window ending now. */
export function softBounceThresholdReached(history: BounceHistory): boolean {
  const since = history.now.getTime() - SOFT_BOUNCE_WINDOW_MS;
  const recent = history.softBounceTimes.filter((t) => t.getTime() >= since && t.getTime() <= history.now.getTime());
  return recent.length + 1 >= SOFT_BOUNCE_THRESHOLD;
}

export function decideBounceEffects(
  report: BounceReport,
  message: BouncedMessage,
  history: BounceHistory,
): BounceEffect[] {
  const email = message.recipient.toLowerCase();
  switch (report.kind) {
    case 'bounce': {
      const failed = report.recipients.filter((r) => r.type !== null);
      const hard = failed.find((r) => r.type === 'HARD');
      if (hard) {
        return [
          { type: 'messageStatus', messageId: message.messageId, status: 'BOUNCED', reason: hard.diagnosticCode ?? hard.status },
          { type: 'suppress', email, reason: 'HARD_BOUNCE' },
          { type: 'subscriberStatus', email, status: 'BOUNCED' },
        ];
      }
      if (failed.length === 0) return [];
      const effects: BounceEffect[] = [{ type: 'recordSoftBounce', email, messageId: message.messageId, at: history.now }];
      if (softBounceThresholdReached(history)) effects.push({ type: 'suppress', email, reason: 'SOFT_BOUNCES' });
      return effects;
    }
    case 'complaint': {
      const effects: BounceEffect[] = [
        { type: 'suppress', email, reason: 'COMPLAINT' },
        { type: 'subscriberStatus', email, status: 'COMPLAINED' },
      ];
      if (message.topicId) effects.push({ type: 'unsubscribeTopic', email, topicId: message.topicId });
      return effects;
    }
    case 'delivered':
      // Success DSN (MAIL_DELIVERY_CONFIRMATION=dsn): the recipient's server confirmed delivery.
      return [{ type: 'messageStatus', messageId: message.messageId, status: 'DELIVERED', reason: null }];
    case 'delayed': // not final: the relay keeps trying and will report again
    case 'unknown':
      return [];
  }
}
