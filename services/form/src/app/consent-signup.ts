// Use case ConsentSignup (the API contract "Events and automations"): a custom event for an address that is no
// subscriber of the account, sent with `consent`, signs the address up "as a form signup would",
// through the same double opt-in rules as a submission job (domain/decision.ts): the suppression
// list, Signup (UNCONFIRMED, the consent's source and givenAt recorded), the 10-minute rule, the
// 24-hour cooldown, the account's daily quota, then the confirmation mail (built-in template, the
// account's default sender, a confirm link naming this record). There is no form: the record lives
// in the submissions collection with formId null (store/submissions.ts), so its mail counts for the
// cooldown and the quota like every other, and the confirm page works as for a form signup.
//
// Idempotent per event: the record's _id is the event id. The messaging service's event consumer may
// call again after a crash or a redelivery; a decided record is answered as it stands, and a record
// stored but not decided (a crash between the two) is decided again from the same inputs: Signup is
// idempotent and the mail's dedupe key (the record's id) answers the mail already sent.
import type { SignupPeers } from '../clients/signup';
import { ALREADY_SENT_WINDOW_MS, COOLDOWN_WINDOW_MS, decide, needsSignup, utcDayStart, type FormDecision, type SubscriberState } from '../domain/decision';
import type { SubmissionDoc, SubmissionRepository } from '../store/submissions';
import { NO_FORM, type SendConfirmationMail } from './confirmation-mail';
import { inTurn } from './decide-submission';

export interface ConsentSignupDeps {
  submissions: Pick<SubmissionRepository, 'get' | 'insertIfAbsent' | 'recordDecision' | 'confirmationsTo' | 'confirmationsOfAccount'>;
  peers: Pick<SignupPeers, 'signup' | 'isSuppressed'>;
  sendConfirmationMail: SendConfirmationMail;
  now(): Date;
  limits: { subscriberLimit: number; dailyConfirmations: number };
}

export interface ConsentSignupInput {
  accountId: string;
  eventId: string;
  /** Canonical (lowercased). */
  email: string;
  consent: { source: string; givenAt: Date };
  /** The caller found a subscriber with the address: only a signup this event made before is answered. */
  subscriberKnown: boolean;
}

export type ConsentSignupAnswer =
  | { signedUp: false }
  | { signedUp: true; decision: FormDecision; subscriberId: string | null; subscriberStatus: SubscriberState | null };

export async function consentSignup(deps: ConsentSignupDeps, input: ConsentSignupInput): Promise<ConsentSignupAnswer> {
  // the same turns as the address's form submissions: the mail limits count the mails recorded before
  return inTurn(`${input.accountId} ${input.email}`, () => signUpInTurn(deps, input));
}

async function signUpInTurn(deps: ConsentSignupDeps, input: ConsentSignupInput): Promise<ConsentSignupAnswer> {
  const { accountId, eventId, email } = input;
  let record = await deps.submissions.get(accountId, eventId);
  if (record?.processedAt) return answerOf(record);
  // A known address signs nothing up, unless this very event began its signup before (the
  // subscriber the caller found is then the one that signup created).
  if (!record && input.subscriberKnown) return { signedUp: false };
  if (!record) {
    record = {
      _id: eventId,
      accountId,
      formId: null,
      eventId,
      email,
      values: {},
      consent: { text: input.consent.source, givenAt: input.consent.givenAt },
      clientAddress: '',
      submittedAt: deps.now(),
      decision: null,
      subscriberId: null,
      subscriberStatus: null,
      confirmationSentAt: null,
      processedAt: null,
    };
    // stored before Signup: a retry after Signup created the subscriber still finds it (above)
    if (!(await deps.submissions.insertIfAbsent(record))) record = (await deps.submissions.get(accountId, eventId)) ?? record;
    if (record.processedAt) return answerOf(record);
  }

  const suppressed = await deps.peers.isSuppressed(accountId, email);
  const signup = needsSignup(suppressed)
    ? await deps.peers.signup({
        accountId,
        email,
        values: {},
        topicIds: [], // none: the subscriber service joins the account's default topic
        doubleOptIn: true,
        consentText: record.consent!.text,
        consentGivenAt: record.consent!.givenAt.toISOString(),
        eventId,
        formId: '',
        subscriberLimit: deps.limits.subscriberLimit,
      })
    : null;
  const now = deps.now();
  const [recentEventMails, mailsToAddress24h, accountMailsToday] = await Promise.all([
    // the 10-minute rule among consent signups (a form's rule counts that form's mails)
    deps.submissions.confirmationsTo(accountId, email, new Date(now.getTime() - ALREADY_SENT_WINDOW_MS), { formId: null }),
    deps.submissions.confirmationsTo(accountId, email, new Date(now.getTime() - COOLDOWN_WINDOW_MS), 'ANY'),
    deps.submissions.confirmationsOfAccount(accountId, utcDayStart(now)),
  ]);
  const { decision, sendConfirmation } = decide({
    doubleOptIn: true,
    suppressed,
    signup,
    recentMailsOfForm: recentEventMails,
    mailsToAddress24h,
    accountMailsToday,
    accountDailyLimit: deps.limits.dailyConfirmations,
  });
  if (sendConfirmation) await deps.sendConfirmationMail(NO_FORM, { accountId, submissionId: eventId, email, values: {} });
  const subscriberId = signup?.subscriberId ?? null;
  const subscriberStatus = signup?.status ?? null;
  const decided = { decision, subscriberId, subscriberStatus, confirmationSentAt: sendConfirmation ? now : null, processedAt: now };
  // no transaction and no fact: the messaging service records the event (with this answer) and its fact
  const first = await deps.submissions.recordDecision(accountId, eventId, decided);
  if (!first) {
    const stored = await deps.submissions.get(accountId, eventId);
    if (stored?.processedAt) return answerOf(stored);
  }
  // a double opt-in decision is never null (only single opt-in forms decide null)
  return { signedUp: true, decision: decision!, subscriberId, subscriberStatus };
}

function answerOf(record: SubmissionDoc): ConsentSignupAnswer {
  return {
    signedUp: true,
    decision: record.decision!,
    subscriberId: record.subscriberId,
    subscriberStatus: (record.subscriberStatus ?? null) as SubscriberState | null,
  };
}
