// The form service as the messaging service sees it: which forms name a sender profile or a
// confirmation template, or serve their landing page on a domain (asked before deleting one), and the
// consent signup of a custom event. When it does not answer, 503 service_unavailable: a delete that
// cannot be proven safe is not done.
import { createClient, peerClient, protoEnum, TIME_LIMITS, type Logger } from '@mailer/kit';
import { consentSignupV1, formV1, submissionsV1, subscriberV1 } from '@mailer/proto';
import type { ConsentSignup } from '../automations/app/record-event';

export type FormReference = { senderProfileId: string } | { templateName: string } | { domain: string };

export interface FormsUsing {
  /** How many of the account's forms name it, and up to 50 of them. */
  formsUsing(accountId: string, ref: FormReference): Promise<{ count: number; forms: Array<{ id: string; name: string }> }>;
  close(): void;
}

export function formsClient(address: string, logger?: Logger): FormsUsing {
  const client = peerClient(createClient(formV1.FormServiceClient, address, TIME_LIMITS.peerCall), {
    service: 'form',
    errorId: 'service_unavailable',
    message: 'The form service, which knows the forms naming this sender profile or template (or serving pages on this domain), is unavailable; retry later.',
    logger,
  });
  return {
    async formsUsing(accountId, ref) {
      const res = await client.countFormsUsing({
        accountId,
        ref:
          'senderProfileId' in ref
            ? { $case: 'senderProfileId', value: ref.senderProfileId }
            : 'templateName' in ref
              ? { $case: 'templateName', value: ref.templateName }
              : { $case: 'domain', value: ref.domain },
      });
      return { count: res.count, forms: res.forms };
    },
    close: () => client.close(),
  };
}

/**
 * Deadline of one ConsentSignup: the form service asks the suppression list and Signup (2 s each)
 * and sends the confirmation mail through this service (up to 15 s); well inside the events
 * consumer's 30 s ack wait.
 */
const CONSENT_SIGNUP_DEADLINE_MS = 20_000;
const Decisions = protoEnum(submissionsV1.FormDecision, 'FORM_DECISION_');
const Statuses = protoEnum(subscriberV1.SubscriberStatus, 'SUBSCRIBER_STATUS_');

/** The form service's ConsentSignup (the API contract "Events and automations": consent signups of unknown addresses). */
export function consentSignupClient(address: string, logger?: Logger): { consentSignup: ConsentSignup; close(): void } {
  const client = peerClient(createClient(consentSignupV1.ConsentSignupServiceClient, address, CONSENT_SIGNUP_DEADLINE_MS), {
    service: 'form',
    errorId: 'service_unavailable',
    message: 'The form service, which signs up addresses with consent, is unavailable; the event is retried.',
    logger,
  });
  return {
    async consentSignup(input) {
      const res = await client.consentSignup({
        accountId: input.accountId,
        eventId: input.eventId,
        email: input.email,
        consentSource: input.consent.source,
        consentGivenAt: input.consent.givenAt,
        subscriberKnown: input.subscriberKnown,
      });
      if (!res.signedUp) return null;
      return {
        decision: Decisions.tryFromProto(res.decision) ?? 'UNSPECIFIED',
        subscriberId: res.subscriberId || null,
        subscriberStatus: Statuses.tryFromProto(res.subscriberStatus) ?? null,
      };
    },
    close: () => client.close(),
  };
}
