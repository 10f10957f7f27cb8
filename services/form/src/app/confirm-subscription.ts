// Double opt-in confirmation (the API contract "Forms", "Public web surface"): the reader opens the link of the
// confirmation mail (GET: a page with a button, nothing changes: mail scanners prefetch links) and
// presses the button (POST: the subscriber UNCONFIRMED -> ACTIVE through the subscriber service's
// ConfirmSubscriber, which emits subscriber.confirmed). The token names the account and the
// submission; the submission names the subscriber the job signed up. The pages name the account the
// reader subscribes to: its display name, read from the gateway's account records when the page is
// shown (so it is always the current one, and no copy of it is kept here).
import { DomainError } from '@mailer/kit';
import type { AccountNames } from '@mailer/nats';
import type { SubscriberConfirmation } from '../clients/confirm-subscriber';
import type { FormRepository } from '../store/forms';
import type { SubmissionRepository } from '../store/submissions';
import type { ConfirmTokens } from './confirm-token';

export interface ConfirmDeps {
  tokens: ConfirmTokens;
  submissions: Pick<SubmissionRepository, 'get' | 'recordConfirmation'>;
  forms: Pick<FormRepository, 'get'>;
  confirmations: Pick<SubscriberConfirmation, 'confirm'>;
  accounts: AccountNames;
  now(): Date;
}

/**
 * What a confirm link leads to. `invalid`: forged, edited, truncated or foreign token (404), or a
 * submission this system does not hold; `expired`: authentic but past its expiry (410); `gone`: the
 * subscriber was deleted since (410); `pending`: the submission is not decided yet (503, try again);
 * `ready` (GET): the page with the button; `confirmed` (POST, also the second time): ACTIVE;
 * `refused` (POST): the subscriber is UNSUBSCRIBED, BOUNCED, COMPLAINED or BLOCKED, nothing changed.
 */
export type ConfirmOutcome =
  | { kind: 'invalid' }
  | { kind: 'expired'; formName: string | null }
  | { kind: 'gone'; formName: string | null }
  | { kind: 'pending'; formName: string | null }
  | { kind: 'ready'; formName: string | null; accountName: string | null; expiresAt: Date }
  | { kind: 'confirmed'; formName: string | null; accountName: string | null }
  | { kind: 'refused'; formName: string | null; status: string };

type Located =
  | { ok: false; outcome: ConfirmOutcome }
  | { ok: true; accountId: string; submissionId: string; subscriberId: string | null; formName: string | null; expiresAt: Date };

async function locate(deps: ConfirmDeps, token: string): Promise<Located> {
  const verified = deps.tokens.verify(token, deps.now());
  if (!verified.ok && verified.reason === 'invalid') return { ok: false, outcome: { kind: 'invalid' } };
  const { accountId, submissionId, expiresAt } = verified.claims;
  const submission = await deps.submissions.get(accountId, submissionId);
  if (!submission) return { ok: false, outcome: { kind: 'invalid' } };
  // a consent signup from a custom event has no form: the pages then name none
  const form = submission.formId ? await deps.forms.get(accountId, submission.formId) : null;
  const formName = form?.name ?? null;
  if (!verified.ok) return { ok: false, outcome: { kind: 'expired', formName } };
  return { ok: true, accountId, submissionId, subscriberId: submission.subscriberId, formName, expiresAt: new Date(expiresAt!) };
}

/** GET: which page the link shows; changes nothing. */
export async function confirmationPageOf(deps: ConfirmDeps, token: string): Promise<ConfirmOutcome> {
  const at = await locate(deps, token);
  if (!at.ok) return at.outcome;
  return { kind: 'ready', formName: at.formName, accountName: await deps.accounts.nameOf(at.accountId), expiresAt: at.expiresAt };
}

/** POST: confirms the submission's subscriber; confirming twice answers `confirmed` again. */
export async function confirmSubscription(deps: ConfirmDeps, token: string): Promise<ConfirmOutcome> {
  const at = await locate(deps, token);
  if (!at.ok) return at.outcome;
  const { formName } = at;
  // The job records the subscriber with its decision, after the mail went out: a reader faster than
  // that commit (or a job still retrying) is asked to try again shortly.
  if (!at.subscriberId) return { kind: 'pending', formName };
  let status: string;
  try {
    ({ status } = await deps.confirmations.confirm(at.accountId, at.subscriberId));
  } catch (err) {
    if (err instanceof DomainError && err.errorId === 'subscriber_not_found') return { kind: 'gone', formName };
    throw err;
  }
  if (status !== 'ACTIVE') return { kind: 'refused', formName, status };
  await deps.submissions.recordConfirmation(at.accountId, at.submissionId, deps.now());
  return { kind: 'confirmed', formName, accountName: await deps.accounts.nameOf(at.accountId) };
}
