// A webhook subscription (the API contract "Webhooks"): where an account's webhook events are delivered and the
// secret that signs them. Pure types and rules, no I/O; the store is store/subscriptions.ts.
import { randomBytes } from 'node:crypto';
import type { SubscriptionEvent } from './webhook-events';

export const DELIVERY_CONTENT_TYPES = ['application/json', 'text/plain'] as const;
export type DeliveryContentType = (typeof DELIVERY_CONTENT_TYPES)[number];
export const DEFAULT_DELIVERY_CONTENT_TYPE: DeliveryContentType = 'application/json';

/** How long a rotated-out secret keeps signing (both signatures are sent meanwhile). */
export const PREVIOUS_SECRET_TTL_MS = 24 * 60 * 60 * 1000;
/** A subscription whose every delivery failed for this long is disabled. */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * 60 * 60 * 1000;

/**
 * Why a subscription was disabled: the target answered `410 Gone`, or every delivery failed for
 * 5 days. Null while active or when the customer set `active: false` themselves.
 */
export const DISABLED_REASONS = ['TARGET_GONE', 'FAILING_FOR_5_DAYS'] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];

export interface Subscription {
  id: string;
  accountId: string;
  targetUrl: string;
  event: SubscriptionEvent;
  deliveryContentType: DeliveryContentType;
  /** False: queues nothing (disabled by the customer, a 410 or 5 days of failures). */
  active: boolean;
  /** Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
  secret: string;
  /** The secret before the last rotation; still signs until previousSecretExpiresAt. */
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  disabledReason: DisabledReason | null;
  createdAt: Date;
  updatedAt: Date;
  /** Since when every delivery has failed (the first failure after the last success); null when healthy. */
  failingSince: Date | null;
}

/** A fresh signing secret. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The secrets a delivery at `now` is signed with: the current one, plus the previous while it lasts. */
export function signingSecrets(sub: Pick<Subscription, 'secret' | 'previousSecret' | 'previousSecretExpiresAt'>, now: Date): string[] {
  const live = sub.previousSecret && sub.previousSecretExpiresAt && sub.previousSecretExpiresAt.getTime() > now.getTime();
  return live ? [sub.secret, sub.previousSecret as string] : [sub.secret];
}

/** Whether a subscription failing since `failingSince` has failed long enough to be disabled at `now`. */
export function failedTooLong(failingSince: Date | null, now: Date): boolean {
  return failingSince !== null && now.getTime() - failingSince.getTime() >= DISABLE_AFTER_FAILING_MS;
}

/** What a PUT changes. `active` omitted keeps the state; see store update for re-enabling. */
export interface SubscriptionChanges {
  targetUrl: string;
  event: SubscriptionEvent;
  deliveryContentType: DeliveryContentType;
  active?: boolean;
  updatedAt: Date;
}
