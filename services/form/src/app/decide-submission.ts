// The submission job's use case (the API contract "Forms": double opt-in decisions): ask the suppression list,
// call Signup, decide (domain/decision.ts), send the confirmation mail for QUEUED, then record the
// decision on the submission and the form.submitted fact in one transaction.
//
// Redelivery: a decided submission (processedAt set) is not decided again. A job that dies after the
// mail and before the record is decided again from the same inputs: Signup is idempotent and the
// mailer answers the mail already sent for the submission (its dedupe key is the submission id).
import { domainFact } from '@mailer/nats/facts';
import type { Transaction } from '@mailer/store';
import type { Store } from '@mailer/store';
import type { SignupPeers } from '../clients/signup';
import { ALREADY_SENT_WINDOW_MS, COOLDOWN_WINDOW_MS, decide, needsSignup, utcDayStart, type FormDecision } from '../domain/decision';
import type { FormRepository } from '../store/forms';
import type { SubmissionRepository } from '../store/submissions';
import type { SendConfirmationMail } from './confirmation-mail';

export interface DecideSubmissionDeps {
  store: Store;
  forms: FormRepository;
  submissions: SubmissionRepository;
  outbox: { record(tx: Transaction, facts: ReadonlyArray<{ subject: string; payload: unknown; id?: string }>): Promise<void> };
  notifyOutbox(): void;
  peers: Pick<SignupPeers, 'signup' | 'isSuppressed'>;
  sendConfirmationMail: SendConfirmationMail;
  now(): Date;
  limits: { subscriberLimit: number; dailyConfirmations: number };
}

export type DecideOutcome =
  | { outcome: 'DECIDED'; decision: FormDecision | null }
  | { outcome: 'ALREADY_DECIDED' }
  /** The submission (or its form) is gone: nothing to decide. */
  | { outcome: 'UNKNOWN_SUBMISSION' };

/** The fact's outbox id: one submission, one form.submitted message (a redelivered job's fact is the same message). */
export const formSubmittedFactId = (submissionId: string) => `form.submitted:${submissionId}`;

/**
 * One address's submissions are decided one after the other in this process: the mail limits count
 * the mails recorded before, so two submissions of a flood decided at once could both see none and
 * both mail. (One form service process decides an account's jobs at a time is assumed; see README.)
 */
const addressTurns = new Map<string, Promise<unknown>>();
/** Runs `task` after every earlier task of the same key (`<accountId> <email>`); consent signups take the same turns. */
export async function inTurn<T>(key: string, task: () => Promise<T>): Promise<T> {
  const before = addressTurns.get(key) ?? Promise.resolve();
  const mine = before.catch(() => undefined).then(task);
  addressTurns.set(key, mine);
  try {
    return await mine;
  } finally {
    if (addressTurns.get(key) === mine) addressTurns.delete(key);
  }
}

export async function decideSubmission(deps: DecideSubmissionDeps, job: { accountId: string; submissionId: string }): Promise<DecideOutcome> {
  const stored = await deps.submissions.get(job.accountId, job.submissionId);
  if (!stored) return { outcome: 'UNKNOWN_SUBMISSION' };
  return inTurn(`${stored.accountId} ${stored.email}`, () => decideInTurn(deps, job));
}

async function decideInTurn(deps: DecideSubmissionDeps, job: { accountId: string; submissionId: string }): Promise<DecideOutcome> {
  const submission = await deps.submissions.get(job.accountId, job.submissionId);
  if (!submission) return { outcome: 'UNKNOWN_SUBMISSION' };
  if (submission.processedAt) return { outcome: 'ALREADY_DECIDED' };
  // The form as it is now (a deleted form's submission is dropped: its topics and mail are gone).
  const form = submission.formId ? await deps.forms.get(submission.accountId, submission.formId) : null;
  if (!form) return { outcome: 'UNKNOWN_SUBMISSION' };
  const { accountId, email } = submission;

  const suppressed = await deps.peers.isSuppressed(accountId, email);
  const signup = needsSignup(suppressed)
    ? await deps.peers.signup({
        accountId,
        email,
        values: submission.values,
        topicIds: form.topicIds,
        doubleOptIn: form.doubleOptIn,
        consentText: submission.consent?.text ?? '',
        formId: form.id,
        subscriberLimit: deps.limits.subscriberLimit,
      })
    : null;
  const now = deps.now();
  const [recentMailsOfForm, mailsToAddress24h, accountMailsToday] = await Promise.all([
    deps.submissions.confirmationsTo(accountId, email, new Date(now.getTime() - ALREADY_SENT_WINDOW_MS), { formId: form.id }),
    deps.submissions.confirmationsTo(accountId, email, new Date(now.getTime() - COOLDOWN_WINDOW_MS), 'ANY'),
    deps.submissions.confirmationsOfAccount(accountId, utcDayStart(now)),
  ]);
  const { decision, sendConfirmation } = decide({
    doubleOptIn: form.doubleOptIn,
    suppressed,
    signup,
    recentMailsOfForm,
    mailsToAddress24h,
    accountMailsToday,
    accountDailyLimit: deps.limits.dailyConfirmations,
  });
  if (sendConfirmation) {
    await deps.sendConfirmationMail(form, { accountId, submissionId: submission._id, email, values: submission.values });
  }
  const subscriberId = signup?.subscriberId ?? null;
  const recorded = await deps.store.transaction(async (tx) => {
    const first = await deps.submissions.recordDecision(accountId, submission._id, { decision, subscriberId, confirmationSentAt: sendConfirmation ? now : null, processedAt: now }, tx);
    if (!first) return false;
    const fact = domainFact({ type: 'form.submitted', accountId, occurredAt: now.toISOString(), formId: form.id, submissionId: submission._id, email, subscriberId, decision });
    await deps.outbox.record(tx, [{ ...fact, id: formSubmittedFactId(submission._id) }]);
    return true;
  });
  if (!recorded) return { outcome: 'ALREADY_DECIDED' };
  deps.notifyOutbox();
  return { outcome: 'DECIDED', decision };
}
