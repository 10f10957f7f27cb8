import type { Form } from '../domain/form';
import type { EmailSender } from '../clients/email-messages';
import type { ConfirmTokens } from './confirm-token';

// The double opt-in confirmation mail (the API contract "Forms"): the submission job asks for it when its
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
 * What a confirmation mail is sent for: a form (its name, sender profile and template), or a consent
 * signup from a custom event (NO_FORM: no name, the built-in template, the account's default sender).
 */
export type ConfirmationOrigin = Pick<Form, 'id' | 'name' | 'confirmationTemplateName' | 'senderProfileId'>;
export const NO_FORM: ConfirmationOrigin = { id: '', name: '', confirmationTemplateName: null, senderProfileId: null };

/**
 * Sends the confirmation mail of one submission, or answers the one already sent for it: a
 * redelivered job calls it again and must never mail twice.
 */
export type SendConfirmationMail = (form: ConfirmationOrigin, request: ConfirmationRequest) => Promise<{ messageId: string }>;

export interface ConfirmationMailerDeps {
  tokens: ConfirmTokens;
  sender: Pick<EmailSender, 'sendConfirmation'>;
  /** FORM_CONFIRM_TOKEN_DAYS: how long the confirm link works. */
  tokenDays: number;
  now(): Date;
}

/** The dedupe key of a submission's confirmation mail: one mail per submission, whatever retries. */
export const confirmationDedupeKey = (submissionId: string) => `form-confirmation:${submissionId}`;

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
/** `1 December 2026, 10:36 UTC`: the expiry as the mail says it (no locale data needed). */
export function readableUtc(d: Date): string {
  const hh = String(d.getUTCHours()).padStart(2, '0');
  const mm = String(d.getUTCMinutes()).padStart(2, '0');
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${hh}:${mm} UTC`;
}

/**
 * The substitutions of a confirmation mail, for the built-in template and a form's own template
 * alike (docs/integrators.md "Signup forms: the confirmation mail" lists them).
 */
export function confirmationValues(form: Pick<Form, 'id' | 'name'>, confirmUrl: string, expiresAt: Date, tokenDays: number): Record<string, unknown> {
  // NO_FORM: `form` is null (the built-in template then says "our mailing list")
  return { confirmUrl, form: form.id ? { id: form.id, name: form.name } : null, expiresAt: expiresAt.toISOString(), expiresOn: readableUtc(expiresAt), expiryDays: tokenDays };
}

/**
 * The SendConfirmationMail of the form service: signs the submission's confirm link (expiring after
 * tokenDays) and sends through the messaging service, with the form's sender profile and template
 * (or the built-in confirmation template), transactional (no List-Unsubscribe). The dedupe key makes
 * a repeated call answer the first call's message: the link of a repeat is signed anew but never
 * sent, so the recipient only ever holds the first one.
 */
export function confirmationMailer(deps: ConfirmationMailerDeps): SendConfirmationMail {
  return async (form, request) => {
    const expiresAt = new Date(deps.now().getTime() + deps.tokenDays * 86_400_000);
    const confirmUrl = deps.tokens.url(request.accountId, request.submissionId, expiresAt);
    const sent = await deps.sender.sendConfirmation({
      accountId: request.accountId,
      email: request.email,
      templateName: form.confirmationTemplateName,
      senderProfileId: form.senderProfileId,
      substitutionData: confirmationValues(form, confirmUrl, expiresAt, deps.tokenDays),
      dedupeKey: confirmationDedupeKey(request.submissionId),
    });
    return { messageId: sent.messageId };
  };
}
