// Rules of a sender profile's values (the API contract "Sender profiles"), pure. The addresses and the display
// name end up in mail headers (From, Reply-To), so control characters are refused here, at save,
// rather than trusted to the mailer's encoding at send.
import isEmail from 'validator/lib/isEmail';
import { invalid, type Problem } from '@mailer/kit';

/** Limits, published in the OpenAPI document (gateway/src/openapi/messaging/sender-profiles.ts). */
export const SENDER_LIMITS = { name: 100, fromName: 100, email: 254 } as const;

export interface SenderProfileInput {
  name: string;
  fromEmail: string;
  fromName: string;
  replyTo?: string | null;
}

export interface SenderProfileValues {
  name: string;
  fromEmail: string;
  fromName: string;
  replyTo: string | null;
}

/** Trimmed, lower-cased whole address, or null when it is not a valid address. */
export function canonicalAddress(raw: string): string | null {
  const email = raw.trim().toLowerCase();
  if (email.length === 0 || email.length > SENDER_LIMITS.email) return null;
  return isEmail(email, { allow_display_name: false, allow_ip_domain: false }) ? email : null;
}

export const domainOf = (email: string): string => email.slice(email.lastIndexOf('@') + 1);

// C0 and C1 controls, DEL, and the Unicode line/paragraph separators: none may reach a header.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

function text(problems: Problem[], path: string, raw: string, max: number): string {
  const value = raw.trim();
  if (value.length === 0) problems.push({ path, problem: 'must not be blank' });
  else if (value.length > max) problems.push({ path, problem: `at most ${max} characters` });
  else if (CONTROL.test(value)) problems.push({ path, problem: 'must not contain line breaks or control characters' });
  return value;
}

/**
 * Checks and canonicalises a profile's values. `allowedDomains` (MAIL_ALLOWED_FROM_DOMAINS, lower
 * case; empty = any) limits the fromEmail domain only: a reply may go anywhere.
 */
export function senderProfileValues(input: SenderProfileInput, allowedDomains: readonly string[]): SenderProfileValues {
  const problems: Problem[] = [];
  const name = text(problems, 'body.name', input.name ?? '', SENDER_LIMITS.name);
  const fromName = text(problems, 'body.fromName', input.fromName ?? '', SENDER_LIMITS.fromName);
  if (problems.length) throw invalid('validation_failed', problems.map((p) => `${p.path}: ${p.problem}`).join('; '), problems);

  const fromEmail = canonicalAddress(input.fromEmail ?? '');
  if (!fromEmail) throw invalid('invalid_email', `fromEmail "${String(input.fromEmail).slice(0, 80)}" is not a valid email address`, [{ path: 'body.fromEmail', problem: 'not a valid email address' }]);
  let replyTo: string | null = null;
  if (input.replyTo !== undefined && input.replyTo !== null) {
    replyTo = canonicalAddress(input.replyTo);
    if (!replyTo) throw invalid('invalid_email', `replyTo "${input.replyTo.slice(0, 80)}" is not a valid email address`, [{ path: 'body.replyTo', problem: 'not a valid email address' }]);
  }
  const domain = domainOf(fromEmail);
  if (allowedDomains.length > 0 && !allowedDomains.includes(domain)) {
    throw invalid('sender_domain_not_allowed', `mail from the domain ${domain} is not allowed by this installation (allowed: ${allowedDomains.join(', ')})`, [
      { path: 'body.fromEmail', problem: `domain ${domain} is not allowed` },
    ]);
  }
  return { name, fromEmail, fromName, replyTo };
}
