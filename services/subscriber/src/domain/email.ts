import isEmail from 'validator/lib/isEmail';
import { invalid } from '@mailer/kit';

/** Longest address SMTP can carry (RFC 5321: 254 in a path). */
export const MAX_EMAIL_LENGTH = 254;

/**
 * The canonical form of an address: trimmed and lowercased as a whole (the API contract). Addresses are
 * unique per account in this form, so "Ann@X.org " and "ann@x.org" are the same subscriber.
 */
export function canonicalEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (email.length === 0 || email.length > MAX_EMAIL_LENGTH || !isEmail(email, { allow_display_name: false, allow_ip_domain: false })) {
    throw invalid('invalid_email', `"${raw.slice(0, 80)}" is not a valid email address`);
  }
  return email;
}
