// Submission use cases: a reader's public submission (POST /public/forms/{formId}/submissions, the
// API contract "Forms": public submissions) and the submissions log (SubmissionService).
//
// An accepted submission is stored with its job in one transaction: the job (events/submission-jobs.ts,
// app/decide-submission.ts) decides later, so the answer is the same whatever the address's state.
// Transport concerns stay in http/submissions.ts: body parsing, CORS and allowed origins, the
// honeypot (a bot gets the accepted answer, decided on the raw post before any validation) and the
// per-address rate limit.
import { notFound } from '@mailer/kit';
import { job } from '@mailer/nats/facts';
import type { Form } from '../domain/form';
import { validateSubmission } from '../domain/submission';
import type { FormRepository } from '../store/forms';
import type { SubmissionPage, SubmissionRepository } from '../store/submissions';
import type { DecideSubmissionDeps } from './decide-submission';
import { formNotFound } from './forms';

/** Longest form id a request may carry: anything longer names nothing that exists. */
const ID_MAX = 100;
const FORM_ID = /^[0-9a-f-]{36}$/i;

/** The ACTIVE form a reader posts to, whatever its account; 404 form_not_found / form_inactive otherwise. */
export async function openForm(deps: { forms: Pick<FormRepository, 'getAcrossAccounts'> }, formId: string): Promise<Form> {
  const form = FORM_ID.test(formId) ? await deps.forms.getAcrossAccounts(formId.toLowerCase()) : null;
  if (!form) throw notFound('form_not_found', 'There is no such form.');
  if (form.status !== 'ACTIVE') throw notFound('form_inactive', 'The form is inactive and accepts no submissions.');
  return form;
}

export type AcceptSubmissionDeps = Pick<DecideSubmissionDeps, 'store' | 'submissions' | 'outbox' | 'notifyOutbox' | 'now'> & { newId(): string };

/**
 * Validates the posted `{values, consent?}` against the form (its input fields as the catalog has them
 * now) and stores it with its job; a DomainError (400 validation_failed with details) otherwise,
 * nothing stored.
 */
export async function acceptSubmission(deps: AcceptSubmissionDeps, input: { form: Form; body: unknown; clientAddress: string }): Promise<{ submissionId: string }> {
  const { form } = input;
  const submission = validateSubmission(form, input.body);
  const now = deps.now();
  const submissionId = deps.newId();
  await deps.store.transaction(async (tx) => {
    await deps.submissions.insert(
      {
        _id: submissionId,
        accountId: form.accountId,
        formId: form.id,
        email: submission.email,
        values: submission.values,
        consent: submission.consent ? { text: submission.consent.text, givenAt: now } : null,
        clientAddress: input.clientAddress,
        submittedAt: now,
        decision: null,
        subscriberId: null,
        confirmationSentAt: null,
        processedAt: null,
      },
      tx,
    );
    // The submission's id is the job's msgID: a job is stored once.
    await deps.outbox.record(tx, [{ ...job('form-submission', { accountId: form.accountId, submissionId }), id: submissionId }]);
  });
  deps.notifyOutbox();
  return { submissionId };
}

/** A form's submissions, newest first, optionally of one decision; 404 form_not_found for another account's or no form. */
export async function listSubmissions(
  deps: { forms: Pick<FormRepository, 'get'>; submissions: Pick<SubmissionRepository, 'page'> },
  accountId: string,
  formId: string,
  q: { decision?: string; pageNumber: number; pageSize: number },
): Promise<SubmissionPage> {
  if (formId.length > ID_MAX || !(await deps.forms.get(accountId, formId))) throw formNotFound(formId);
  return deps.submissions.page(accountId, formId, q);
}
