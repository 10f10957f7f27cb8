// Rules of the suppression list's input (the API contract "Delivery facts ... suppressions"), pure.
import isEmail from 'validator/lib/isEmail';
import { invalid } from '@mailer/kit';

/** Longest address SMTP can carry (RFC 5321: 254 in a path). */
export const MAX_EMAIL_LENGTH = 254;

/**
 * The canonical form (trimmed, lower-cased as a whole: the API contract), the form every message
 * and suppression stores, or `400 invalid_email`.
 */
export function suppressionAddress(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (email.length === 0 || email.length > MAX_EMAIL_LENGTH || !isEmail(email, { allow_display_name: false, allow_ip_domain: false })) {
    throw invalid('invalid_email', `"${raw.slice(0, 80)}" is not a valid email address`);
  }
  return email;
}

