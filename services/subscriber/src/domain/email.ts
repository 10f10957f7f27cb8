import isEmail from 'validator/lib/isEmail';
import { invalid } from '@mailer/kit';

/** Longest address SMTP can carry (RFC 5321: 254 in a path). */
export const MAX_EMAIL_LENGTH = 254;

/**
 * The canonical form of an address: trimmed and lowercased as a whole (the API contract). Addresses are
 * unique per account in this form, so "Ann@X.org " and "ann@x.org" are the same subscriber.
 */
export function canonicalEmail(raw: string, path?: string): string {
  const email = raw.trim().toLowerCase();
  if (email.length === 0 || email.length > MAX_EMAIL_LENGTH || !isEmail(email, { allow_display_name: false, allow_ip_domain: false })) {
    throw invalid('invalid_email', `${path ? `${path}: ` : ''}"${raw.slice(0, 80)}" is not a valid email address`, path ? [{ path, problem: 'not a valid email address' }] : undefined);
  }
  return email;
}

/** The canonical form of each address of a request's list (`path`), in order: 1..max of them. */
export function canonicalEmails(raw: readonly string[], path: string, max: number): string[] {
  if (raw.length === 0 || raw.length > max) {
    throw invalid('validation_failed', `${path} must hold 1 to ${max} addresses, got ${raw.length}`, [{ path, problem: raw.length === 0 ? 'empty' : `more than ${max} entries` }]);
  }
  return raw.map((e, i) => canonicalEmail(e, `${path}[${i}]`));
}
