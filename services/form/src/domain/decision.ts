// The double opt-in decision of one submission (the API contract "Forms"), pure: what the suppression list,
// the subscriber service's Signup answer and the recent confirmation mails say, in; the decision
// (null for a single opt-in form) and whether a confirmation mail goes out, out.
//
// Precedence (docs/integrators.md "Signup forms"): a suppressed address first (GetSuppression on messaging; no subscriber is created for it),
// then the account's subscriber quota (Signup refused to create), then single opt-in (decided, null),
// then the subscriber's state (ACTIVE: already subscribed; BLOCKED/BOUNCED/COMPLAINED/UNSUBSCRIBED:
// policy), then for a new or UNCONFIRMED address the mail limits: the same form's mail within 10
// minutes, 3 mails to the address in 24 h, the account's daily confirmation quota; else QUEUED.
import { FORM_DECISIONS } from '@mailer/nats/facts';

export type FormDecision = (typeof FORM_DECISIONS)[number];
export { FORM_DECISIONS };

/** Window of CONFIRMATION_MAIL_ALREADY_SENT (per address and form). */
export const ALREADY_SENT_WINDOW_MS = 10 * 60_000;
/** Window and count of SUPPRESSED_COOLDOWN (per address, every form of the account). */
export const COOLDOWN_WINDOW_MS = 24 * 3_600_000;
export const COOLDOWN_MAILS = 3;

export type SubscriberState = 'UNCONFIRMED' | 'ACTIVE' | 'UNSUBSCRIBED' | 'BOUNCED' | 'COMPLAINED' | 'BLOCKED';

export interface DecisionInput {
  doubleOptIn: boolean;
  /** The address is on the account's suppression list. */
  suppressed: boolean;
  /** Signup's answer; null when it was not asked (a suppressed address). */
  signup: { outcome: 'CREATED' | 'EXISTING' | 'LIMIT_REACHED'; previousStatus: SubscriberState | null } | null;
  /** Confirmation mails queued to the address by this form in the last 10 minutes. */
  recentMailsOfForm: number;
  /** Confirmation mails queued to the address by any form of the account in the last 24 h. */
  mailsToAddress24h: number;
  /** Confirmation mails the account's forms queued today (UTC). */
  accountMailsToday: number;
  /** FORM_ACCOUNT_DAILY_CONFIRMATIONS; 0 = no limit. */
  accountDailyLimit: number;
}

export interface Decision {
  decision: FormDecision | null;
  /** True only for QUEUED: the confirmation mail goes out. */
  sendConfirmation: boolean;
}

const decided = (decision: FormDecision | null): Decision => ({ decision, sendConfirmation: decision === 'QUEUED' });

/** Whether Signup is to be called at all: never for a suppressed address. */
export const needsSignup = (suppressed: boolean): boolean => !suppressed;

export function decide(input: DecisionInput): Decision {
  if (input.suppressed || !input.signup) return decided('SUPPRESSED_SUBSCRIBER_POLICY');
  if (input.signup.outcome === 'LIMIT_REACHED') return decided('SUPPRESSED_SUBSCRIBER_LIMIT');
  if (!input.doubleOptIn) return decided(null);
  const previous = input.signup.outcome === 'CREATED' ? null : input.signup.previousStatus;
  if (previous === 'ACTIVE') return decided('SUPPRESSED_ALREADY_SUBSCRIBED');
  if (previous !== null && previous !== 'UNCONFIRMED') return decided('SUPPRESSED_SUBSCRIBER_POLICY');
  if (input.recentMailsOfForm > 0) return decided('CONFIRMATION_MAIL_ALREADY_SENT');
  if (input.mailsToAddress24h >= COOLDOWN_MAILS) return decided('SUPPRESSED_COOLDOWN');
  if (input.accountDailyLimit > 0 && input.accountMailsToday >= input.accountDailyLimit) return decided('SUPPRESSED_CUSTOMER_LIMIT');
  return decided('QUEUED');
}

/** Start of the UTC day of `now` (the account's daily confirmation quota counts from it). */
export const utcDayStart = (now: Date): Date => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
