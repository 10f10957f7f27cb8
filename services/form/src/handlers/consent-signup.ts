// ConsentSignupService: gRPC <-> the consent signup of a custom event (app/consent-signup.ts).
import { accountOf, invalid, protoEnum, type AsyncHandlers } from '@mailer/kit';
import { consentSignupV1, subscriberV1 } from '@mailer/proto';
import { consentSignup, type ConsentSignupDeps } from '../app/consent-signup';
import { Decisions } from './submissions';

const Statuses = protoEnum(subscriberV1.SubscriberStatus, 'SUBSCRIBER_STATUS_');
const ID_MAX = 100;
const EMAIL_MAX = 320;
const SOURCE_MAX = 500;

function required(value: string, path: string, max: number): string {
  if (!value || value.length > max) throw invalid('validation_failed', `${path} must be 1..${max} characters`, [{ path, problem: value ? 'too long' : 'missing' }]);
  return value;
}

export function consentSignupHandlers(deps: ConsentSignupDeps): AsyncHandlers<consentSignupV1.ConsentSignupServiceServer> {
  return {
    async consentSignup(req) {
      const accountId = accountOf(req);
      const givenAt = new Date(req.consentGivenAt);
      if (!req.consentGivenAt || Number.isNaN(givenAt.getTime())) {
        throw invalid('validation_failed', 'consentGivenAt must be an ISO 8601 instant', [{ path: 'consentGivenAt', problem: 'not an instant' }]);
      }
      const answer = await consentSignup(deps, {
        accountId,
        eventId: required(req.eventId, 'eventId', ID_MAX),
        email: required(req.email, 'email', EMAIL_MAX).trim().toLowerCase(),
        consent: { source: required(req.consentSource, 'consentSource', SOURCE_MAX), givenAt },
        subscriberKnown: req.subscriberKnown,
      });
      if (!answer.signedUp) return { signedUp: false, decision: 0, subscriberStatus: 0 };
      return {
        signedUp: true,
        decision: Decisions.toProto(answer.decision),
        subscriberId: answer.subscriberId ?? undefined,
        subscriberStatus: Statuses.toProtoOrUnspecified(answer.subscriberStatus ?? undefined),
      };
    },
  };
}
