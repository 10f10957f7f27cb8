import type { Form } from '../domain/form';

// The double opt-in confirmation mail (API.md "Forms"): the submission job asks for it when its
// decision sends one. This file is the contract between the submission job (the caller) and the
// mailer that renders the signed confirm link and sends through the messaging service.

export interface ConfirmationRequest {
  accountId: string;
  /** The submission being confirmed: the confirm token names it, and it keys the mail's dedupe. */
  submissionId: string;
  email: string;
  /** The submitted values by personalizationTagName (for the template). */
  values: Record<string, unknown>;
}

/**
 * Sends the confirmation mail of one submission, or answers the one already sent for it: a
 * redelivered job calls it again and must never mail twice.
 */
export type SendConfirmationMail = (form: Form, request: ConfirmationRequest) => Promise<{ messageId: string }>;
