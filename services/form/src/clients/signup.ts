// The peers the submission job asks: the subscriber service's Signup (creates or updates the
// subscriber, answers its status before and after) and the messaging service's suppression list (is
// the address suppressed in the account: GetSuppression). A peer that does not answer throws PeerUnavailable: the job
// is retried later.
import { createClient, peerClient, type Logger } from '@mailer/kit';
import { signupV1, subscriberV1, suppressionsV1 } from '@mailer/proto';
import type { SubscriberState } from '../domain/decision';

export interface SignupCall {
  accountId: string;
  email: string;
  values: Record<string, unknown>;
  topicIds: string[];
  doubleOptIn: boolean;
  consentText: string;
  /** Empty for a consent signup from a custom event (eventId). */
  formId: string;
  subscriberLimit: number;
  /** A custom event's consent: when it was given (ISO 8601) and the event. */
  consentGivenAt?: string;
  eventId?: string;
}

export interface SignupAnswer {
  outcome: 'CREATED' | 'EXISTING' | 'LIMIT_REACHED';
  subscriberId: string | null;
  previousStatus: SubscriberState | null;
  /** After the call (null for LIMIT_REACHED). */
  status: SubscriberState | null;
}

export interface SignupPeers {
  signup(call: SignupCall): Promise<SignupAnswer>;
  isSuppressed(accountId: string, email: string): Promise<boolean>;
  close(): void;
}

const STATUS = subscriberV1.SubscriberStatus;
const STATES: Partial<Record<number, SubscriberState>> = {
  [STATUS.SUBSCRIBER_STATUS_UNCONFIRMED]: 'UNCONFIRMED',
  [STATUS.SUBSCRIBER_STATUS_ACTIVE]: 'ACTIVE',
  [STATUS.SUBSCRIBER_STATUS_UNSUBSCRIBED]: 'UNSUBSCRIBED',
  [STATUS.SUBSCRIBER_STATUS_BOUNCED]: 'BOUNCED',
  [STATUS.SUBSCRIBER_STATUS_COMPLAINED]: 'COMPLAINED',
  [STATUS.SUBSCRIBER_STATUS_BLOCKED]: 'BLOCKED',
};
const OUTCOME = signupV1.SignupOutcome;

export function signupPeers(addresses: { subscriber: string; messaging: string }, deadlineMs: number, logger?: Logger): SignupPeers {
  const signups = peerClient(createClient(signupV1.SignupServiceClient, addresses.subscriber, deadlineMs), {
    service: 'subscriber',
    errorId: 'service_unavailable',
    message: 'The subscriber service is unavailable; the submission is decided later.',
    logger,
  });
  const suppressions = peerClient(createClient(suppressionsV1.SuppressionServiceClient, addresses.messaging, deadlineMs), {
    service: 'messaging',
    errorId: 'service_unavailable',
    message: 'The messaging service is unavailable; the submission is decided later.',
    logger,
  });
  return {
    async signup(call) {
      const res = await signups.signup({
        accountId: call.accountId,
        email: call.email,
        valuesJson: JSON.stringify(call.values),
        topicIds: call.topicIds,
        doubleOptIn: call.doubleOptIn,
        consentText: call.consentText,
        formId: call.formId,
        subscriberLimit: String(call.subscriberLimit),
        consentGivenAt: call.consentGivenAt ?? '',
        eventId: call.eventId ?? '',
      });
      const outcome = res.outcome === OUTCOME.SIGNUP_OUTCOME_CREATED ? 'CREATED' : res.outcome === OUTCOME.SIGNUP_OUTCOME_LIMIT_REACHED ? 'LIMIT_REACHED' : 'EXISTING';
      return { outcome, subscriberId: res.subscriberId || null, previousStatus: STATES[res.previousStatus] ?? null, status: STATES[res.status] ?? null };
    },
    async isSuppressed(accountId, email) {
      return (await suppressions.getSuppression({ accountId, email })).found;
    },
    close() {
      signups.close();
      suppressions.close();
    },
  };
}
