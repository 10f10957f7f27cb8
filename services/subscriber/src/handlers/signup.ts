// SignupService RPCs: each parses its request and calls its use case in app/signup.ts.
import { accountOf, invalid, type AsyncHandlers } from '@mailer/kit';
import { signupV1, subscriberV1 } from '@mailer/proto';
import type { Deps } from '../app/deps';
import * as signups from '../app/signup';
import { parseId } from '../domain/ids';
import { statusToProto } from './mapping';

const OUTCOMES: Record<signups.SignupOutcome, signupV1.SignupOutcome> = {
  CREATED: signupV1.SignupOutcome.SIGNUP_OUTCOME_CREATED,
  EXISTING: signupV1.SignupOutcome.SIGNUP_OUTCOME_EXISTING,
  LIMIT_REACHED: signupV1.SignupOutcome.SIGNUP_OUTCOME_LIMIT_REACHED,
};

const status = (s: Parameters<typeof statusToProto>[0] | null) => (s ? statusToProto(s) : subscriberV1.SubscriberStatus.SUBSCRIBER_STATUS_UNSPECIFIED);

function parseValues(raw: string): Record<string, unknown> {
  if (!raw) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw invalid('validation_failed', 'values_json is not JSON', [{ path: 'values', problem: 'not JSON' }]);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalid('validation_failed', 'values_json is not a JSON object', [{ path: 'values', problem: 'not an object' }]);
  return parsed as Record<string, unknown>;
}

function parseInstant(raw: string, path: string): string {
  const t = Date.parse(raw);
  if (Number.isNaN(t)) throw invalid('validation_failed', `${path} is not an ISO 8601 instant`, [{ path, problem: 'not an instant' }]);
  return new Date(t).toISOString();
}

export function signupHandlers(deps: Deps): AsyncHandlers<signupV1.SignupServiceServer> {
  return {
    async signup(req) {
      const accountId = accountOf(req);
      const r = await signups.signup(deps, {
        accountId,
        email: req.email,
        values: parseValues(req.valuesJson),
        topicIds: req.topicIds.map((t, i) => parseId(t, `topicIds[${i}]`)),
        doubleOptIn: req.doubleOptIn,
        consentText: req.consentText,
        formId: req.formId,
        ...(req.consentGivenAt ? { consentGivenAt: parseInstant(req.consentGivenAt, 'consentGivenAt') } : {}),
        ...(req.eventId ? { eventId: parseId(req.eventId, 'eventId') } : {}),
        subscriberLimit: Number(req.subscriberLimit) || 0,
      });
      return { outcome: OUTCOMES[r.outcome], subscriberId: r.subscriberId ?? '', status: status(r.status), previousStatus: status(r.previousStatus) };
    },

    async confirmSubscriber(req) {
      const accountId = accountOf(req);
      const r = await signups.confirmSubscriber(deps, { accountId, subscriberId: parseId(req.subscriberId, 'subscriberId') });
      return { status: statusToProto(r.status), previousStatus: statusToProto(r.previousStatus) };
    },
  };
}
